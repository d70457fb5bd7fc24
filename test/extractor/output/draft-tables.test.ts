import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { runOutput, type OutputConfig, type OutputRun } from '../../support/output.js';

/**
 * Draft tables (written while pages arrive) are only an optimisation: for every kind of run the
 * files, logs and state must be byte-identical to replaying the queue at the end — whether the
 * drafts survive (the structure stayed the same) or are dropped (it changed).
 */
describe('JSON parser: draft tables write exactly what the replay writes', () => {
  const withoutTimes = (logs: string) => logs.replace(/^\S+ /gm, '');

  async function bothWays(configs: OutputConfig[], struct?: string): Promise<OutputRun> {
    const structVersion = struct ? 3 : null;
    const replayed = await runOutput(configs, { drafts: false, struct, structVersion });
    const drafted = await runOutput(configs, { struct, structVersion });
    assert.deepEqual([...drafted.files.keys()], [...replayed.files.keys()]);
    for (const [name, content] of replayed.files) assert.equal(drafted.files.get(name), content, `${name} differs`);
    assert.deepEqual(drafted.written, replayed.written);
    assert.equal(withoutTimes(drafted.logs), withoutTimes(replayed.logs));
    assert.deepEqual(drafted.state, replayed.state);
    return drafted;
  }

  const pages = (...rows: string[]) => rows.map((r) => ({ rows: r }));

  it('a stable structure: the drafts are the tables', async () => {
    const seen: string[][] = [];
    const configs = [{ batches: pages('[{"id":1,"p":1.5}]', '[{"id":2,"p":2}]', '[{"id":3,"p":0.1}]') }];
    const run = await runOutput(configs, {
      afterPage: async (tmpDir) => {
        const [spool] = (await readdir(tmpDir)).filter((d) => d.startsWith('gex-spool-'));
        seen.push((await readdir(path.join(tmpDir, spool))).filter((f) => f.startsWith('draft-')));
      },
    });
    // written while the run went on, not at the end
    assert.deepEqual(seen, [['draft-1.csv'], ['draft-1.csv'], ['draft-1.csv']]);
    assert.equal(run.files.get('b.a'), '"id","p"\n"1","1.5"\n"2","2"\n"3","0.1"\n');
    await bothWays(configs);
  });

  it('a new property on a later page: dropped, and earlier rows get the empty cell', async () => {
    const run = await bothWays([{ batches: pages('[{"id":1}]', '[{"id":2}]', '[{"id":3,"extra":"x"}]') }]);
    assert.equal(run.files.get('b.a'), '"id","extra"\n"1",""\n"2",""\n"3","x"\n');
  });

  it('type upgrades later in the run (null → object, scalar → array)', async () => {
    await bothWays([
      {
        batches: pages(
          '[{"id":1,"o":null,"t":"a"}]',
          '[{"id":2,"o":{"k":1},"t":"b"}]',
          '[{"id":3,"o":null,"t":["c","d"]}]',
        ),
      },
    ]);
  });

  it('child tables, parent ids and injected columns with a clash rename', async () => {
    const run = await bothWays([
      {
        batches: [
          {
            rows: '[{"id":1,"user":"u1","tags":["a","b"],"items":[{"sku":"x","qty":1}]}]',
            injected: '{"user":"from userData"}',
          },
          {
            rows: '[{"id":2,"user":"u2","tags":[],"items":[{"sku":"y","qty":2},{"sku":"z","qty":3}]}]',
            injected: '{"user":"from userData"}',
          },
        ],
      },
    ]);
    assert.match(run.files.get('b.a')!, /^"id","user","tags","items","user_u0"\n/);
  });

  it('lists inside lists become JSON text cells', async () => {
    const run = await bothWays([{ batches: pages('[[1,2],[3]]', '[[4.5]]') }]);
    assert.equal(run.files.get('b.a'), '"data"\n"[1,2]"\n"[3]"\n"[4.5]"\n');
  });

  it('several data types and configs sharing a bucket', async () => {
    await bothWays([
      {
        batches: [
          { rows: '[{"id":1}]', type: 'users' },
          { rows: '[{"uid":1,"n":"x"}]', type: 'details' },
          { rows: '[{"id":2}]', type: 'users' },
        ],
      },
      { batches: [{ rows: '[{"id":3,"late":true}]', type: 'users' }] },
    ]);
  });

  it('a structure seeded from the state', async () => {
    const struct =
      '{"data":{"_a":{"[]":{"nodeType":"object","_id":{"nodeType":"scalar","headerNames":"id"},"_old":{"nodeType":"scalar","headerNames":"old"}},"nodeType":"array"}},"parent_aliases":[]}';
    const run = await bothWays([{ batches: pages('[{"id":1}]', '[{"id":2}]') }], struct);
    assert.equal(run.files.get('b.a'), '"id","old"\n"1",""\n"2",""\n');
  });
});
