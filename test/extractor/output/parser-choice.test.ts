import assert from 'node:assert/strict';
import { outStateText } from '../../support/out-state.js';
import { chooseParser } from '../../../src/extractor/output/parser-choice.js';
import { StructState } from '../../../src/extractor/output/record-parser.js';
import { decodeJson, JsonFloat } from '../../../src/json/index.js';
import { runOutput } from '../../support/output.js';

const v3 =
  '{"data":{"_a":{"[]":{"_id":{"nodeType":"scalar","headerNames":"id"},"_previous":{"nodeType":"scalar","headerNames":"previous"},"nodeType":"object","headerNames":"data"},"nodeType":"array"}},"parent_aliases":[]}';
const v2 = '{"a":{"id":"scalar","previous":"scalar"}}';
const rows = '[{"id":1,"n.x":2}]';

/** Runs type `a/{b}`: the legacy parser names its table `a__b` (runs of `_` kept), the new one `a_b`. */
async function header(options: { compatLevel?: number; struct?: string; structVersion?: unknown }) {
  const run = await runOutput([{ compatLevel: options.compatLevel, batches: [{ rows, type: 'a/{b}' }] }], {
    struct: options.struct,
    structVersion: options.structVersion as never,
  });
  const file = [...run.files.keys()].find((f) => !f.endsWith('.manifest'))!;
  return { file, header: run.files.get(file)!.split('\n')[0], logs: run.logs, state: run.state };
}

describe('which JSON parser runs', () => {
  it('compatLevel 1 or negative selects the legacy parser; 2, 3 and absent the new one', async () => {
    for (const level of [1, -1]) {
      const run = await header({ compatLevel: level });
      assert.equal(run.file, 'b.a__b', `compatLevel ${level}`);
      assert.match(run.logs, /Using legacy JSON parser, because it has been explicitly requested\./);
    }
    for (const level of [2, 3, undefined])
      assert.equal((await header({ compatLevel: level })).file, 'b.a_b', `compatLevel ${level}`);
  });

  it('a saved structure of version 2 (the integer) selects the legacy parser whatever the compatLevel', async () => {
    const run = await header({ struct: '{"a/{b}":{"id":"scalar","previous":"scalar"}}', structVersion: 2 });
    assert.equal(run.file, 'b.a__b');
    assert.equal(run.header, '"id","previous","n_x"');
    assert.match(run.logs, /Using legacy JSON parser, because it is in configuration state\./);
  });

  it('a saved structure of another version selects the new parser and ignores compatLevel 1 with a warning', async () => {
    const struct = v3.replace('"_a"', '"_a/{b}"');
    const run = await header({ compatLevel: 1, struct, structVersion: 3 });
    assert.equal(run.file, 'b.a_b');
    assert.equal(run.header, '"id","previous","n_x"');
    assert.match(run.logs, /Ignored request for legacy JSON parser, because configuration is already upgraded\./);
    assert.equal(chooseParser(new StructState(decodeJson(v2), new JsonFloat(2)), 3).kind, 'json');
    assert.equal(chooseParser(new StructState(decodeJson(v2), '2'), 3).kind, 'json');
  });

  it('a structure without a version (or an empty one) is not used', async () => {
    const run = await header({ struct: v3.replace('"_a"', '"_a/{b}"'), structVersion: null });
    assert.equal(run.header, '"id","n_x"');
    assert.equal(chooseParser(new StructState(new Map(), 2), 1).kind, 'legacy');
    assert.equal(chooseParser(new StructState(new Map(), 2), 3).kind, 'json');
    assert.equal(chooseParser(new StructState(decodeJson(v2), 2), 3).seed !== undefined, true);
  });
});

describe('state structure across configs', () => {
  it('the new parser saves version 3 and the legacy parser version 2, merged over the input', async () => {
    const input = decodeJson(`{"json_parser.struct":${v2},"json_parser.structVersion":2}`) as Map<string, never>;
    const legacyRun = await runOutput([{ batches: [{ rows: '[{"id":1,"x":2}]', type: 'a' }] }], {
      struct: v2,
      structVersion: 2,
    });
    assert.equal(
      outStateText(input, 5, legacyRun.state),
      '{"json_parser.struct":{"a":{"id":"scalar","previous":"scalar","x":"scalar"}},"json_parser.structVersion":2,"time":{"previousStart":5}}',
    );
    const modernRun = await runOutput([{ batches: [{ rows: '[{"id":1}]', type: 'a' }] }]);
    assert.match(outStateText(new Map(), 5, modernRun.state), /,"json_parser\.structVersion":3\}$/);
  });

  it('carries the learned structure into the parser of a later bucket, but not from a mapped bucket', async () => {
    const run = await runOutput([
      { bucket: 'one', batches: [{ rows: '[{"b":1,"a":2}]', type: 't' }] },
      { bucket: 'mapped', mappings: '{"m":{"x":"x"}}', batches: [{ rows: '[{"q":1}]', type: 't2' }] },
      {
        bucket: 'two',
        batches: [
          { rows: '[{"a":3,"c":4}]', type: 't' },
          { rows: '[{"q":2}]', type: 't2' },
        ],
      },
    ]);
    assert.equal(run.files.get('one.t'), '"b","a"\n"1","2"\n');
    assert.equal(run.files.get('two.t'), '"b","a","c"\n"","3","4"\n');
    // the mapped bucket's fallback structure (t2) was not taken over: bucket two learns q afresh
    assert.equal(run.files.get('two.t2'), '"q"\n"2"\n');
    const state = outStateText(new Map(), 1, run.state);
    assert.match(state, /"_t":\{"\[\]":\{"_b":.*"_a":.*"_c":/);
    assert.match(state, /"_t2"/);
  });

  it('shares one parser per bucket: the first config decides legacy or new, the last one the incremental flag', async () => {
    const run = await runOutput([
      { bucket: 'x', compatLevel: 1, incremental: true, batches: [{ rows: '[{"id":1}]', type: 'a/{b}' }] },
      { bucket: 'x', compatLevel: 3, incremental: false, batches: [{ rows: '[{"id":2}]', type: 'a/{b}' }] },
    ]);
    assert.equal(run.files.get('x.a__b'), '"id"\n"1"\n"2"\n');
    assert.equal(run.files.get('x.a__b.manifest'), '{"destination":"in.c-x.a__b","incremental":false}');
  });
});
