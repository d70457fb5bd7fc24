import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { answer } from './api-model.js';
import type { ApiModel, Collection } from './case-model.js';
import { compareSides, requestOrderOf } from './compare.js';
import { caseOfSeed, runOneCase } from './differential.js';
import { gexInProcessEngine, type Engine } from './engines.js';
import { num, ordered, toJsonText } from './json-text.js';
import type { SideResult } from './run-case.js';

/** The differential tester's own parts, checked without the reference GE (gex plays both sides). */
const records = Array.from({ length: 5 }, (_, i) => ordered([['id', i + 1]]));
const collection = (envelope: Collection['envelope']): Collection => ({ records, pageSize: 2, envelope });
const model = (
  style: ApiModel['paging']['style'],
  envelope: Collection['envelope'] = { dataPath: null },
): ApiModel => ({
  paging: {
    style,
    pageParam: 'page',
    limitParam: 'limit',
    offsetParam: 'offset',
    cursorParam: 'since',
    tokenParam: 'token',
    firstPage: 1,
  },
  collections: [collection(envelope)],
});
const get = (m: ApiModel, target: string, index = 0) =>
  String(answer(m, { method: 'GET', target, body: '', contentType: undefined }, index, 'http://h').body);

describe('differential tester: the API model', () => {
  it('pages by the parameters the pagination sends', () => {
    assert.equal(get(model('pagenum'), '/c0?page=2'), '[{"id":3},{"id":4}]');
    assert.equal(get(model('offset'), '/c0?offset=4&limit=3'), '[{"id":5}]');
    assert.equal(get(model('cursor'), '/c0?since=3'), '[{"id":4},{"id":5}]');
    assert.equal(get(model('token'), '/c0?token=t4'), '[{"id":5}]');
    assert.equal(get(model('none'), '/c0'), toJsonText(records));
  });

  it('writes next links, flags and totals into an envelope, and ends them as configured', () => {
    const m = model('url', {
      dataPath: ['data'],
      next: { key: ['links', 'next'], form: 'rooted', atEnd: 'null' },
      flag: { key: 'more', style: 'int', omitAtEnd: true },
      total: { key: ['total'], asString: true },
    });
    assert.equal(get(m, '/c0'), '{"more":1,"links":{"next":"/c0?start=2"},"total":"5","data":[{"id":1},{"id":2}]}');
    assert.equal(get(m, '/c0?start=4'), '{"links":{"next":null},"total":"5","data":[{"id":5}]}');
  });

  it('answers 400 once a run has used its request budget (no endless paging)', () => {
    assert.equal(
      answer(model('pagenum'), { method: 'GET', target: '/c0', body: '', contentType: undefined }, 60, 'http://h')
        .status,
      400,
    );
  });

  it('keeps number spellings and key order as written', () => {
    assert.equal(
      toJsonText(
        ordered([
          ['b', num('1.0')],
          ['1', num('-0.0')],
        ]),
      ),
      '{"b":1.0,"1":-0.0}',
    );
  });
});

describe('differential tester: comparing two runs', () => {
  const side = (over: Partial<SideResult>): SideResult => ({
    engine: 'x',
    code: 0,
    timedOut: false,
    log: '',
    requests: [],
    outputs: new Map(),
    ...over,
  });
  const request = (headers: [string, string][], body = '') => ({ method: 'GET', target: '/a', headers, body });

  it('ignores User-Agent and transport headers but not the others', () => {
    assert.deepEqual(
      compareSides(
        side({ requests: [request([['user-agent', 'GuzzleHttp/7']])] }),
        side({
          requests: [
            request([
              ['user-agent', 'gex'],
              ['connection', 'keep-alive'],
            ]),
          ],
        }),
      ),
      [],
    );
    const [difference] = compareSides(
      side({ requests: [request([['x-a', 'Ã¼']])] }),
      side({ requests: [request([['x-a', 'ÃÂ¼']])] }),
    );
    assert.equal(difference.where, 'request headers');
  });

  it('compares state.json with the run start time as a placeholder, every other byte exactly', () => {
    const state = (text: string) => new Map([['state.json', Buffer.from(text)]]);
    assert.deepEqual(
      compareSides(
        side({ outputs: state('{"time":{"previousStart":1}}') }),
        side({ outputs: state('{"time":{"previousStart":2}}') }),
      ),
      [],
    );
    assert.equal(
      compareSides(side({ outputs: state('{"a":1.0}') }), side({ outputs: state('{"a":1}') }))[0].where,
      'output state',
    );
  });

  it("with child concurrency, requests match as a set; after a failure GE's must be among gex's", () => {
    const at = (target: string) => ({ method: 'GET', target, headers: [] as [string, string][], body: '' });
    const ge = side({ requests: [at('/p'), at('/c/1'), at('/c/2')] });
    assert.equal(
      requestOrderOf({ config: { jobs: [{ endpoint: 'p', children: [{ endpoint: 'c', concurrency: 4 }] }] } }),
      'set',
    );
    assert.equal(
      requestOrderOf({ config: { jobs: [{ endpoint: 'p', children: [{ endpoint: 'c', concurrency: 1 }] }] } }),
      'sequence',
    );
    assert.deepEqual(compareSides(ge, side({ requests: [at('/p'), at('/c/2'), at('/c/1')] }), 'set'), []);
    assert.equal(
      compareSides(ge, side({ requests: [at('/p'), at('/c/2'), at('/c/1')] }))[0].where,
      'request path',
      'in sequence order they differ',
    );
    assert.equal(compareSides(ge, side({ requests: [at('/p'), at('/c/2')] }), 'set')[0].where, 'request missing');
    assert.equal(
      compareSides(ge, side({ requests: [at('/p'), at('/c/2'), at('/c/1'), at('/c/3')] }), 'set')[0].where,
      'request extra',
    );
    const failing = (requests: ReturnType<typeof at>[]) => side({ code: 1, requests });
    assert.deepEqual(
      compareSides(failing(ge.requests), failing([at('/c/3'), at('/c/2'), at('/p'), at('/c/1')]), 'set'),
      [],
      'a run that fails may have sent later requests ahead',
    );
    assert.equal(
      compareSides(failing(ge.requests), failing([at('/p'), at('/c/1')]), 'set')[0].where,
      'request missing',
    );
  });

  it('reports exit codes first', () => {
    assert.equal(
      compareSides(side({ code: 2 }), side({ code: 1, log: '10:00:00.000 ERROR Column "a" has 3 values\n' }))[0].where,
      "exit 2→1: Column '' has 0 values",
    );
  });
});

describe('differential tester: real runs with gex on both sides', function () {
  this.timeout(120_000);
  let workDir: string;
  before(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'gex-differential-tool-'));
  });
  after(() => rm(workDir, { recursive: true, force: true }));
  const options = (reference: Engine, gex: Engine, shrinkRuns = 0) => ({
    shrinkRuns,
    timeoutMs: 60_000,
    workDir,
    reference,
    gex,
  });

  it('finds no difference between gex and itself (the harness is deterministic)', async () => {
    for (const seed of [1, 2, 3]) {
      const report = await runOneCase(seed, options(gexInProcessEngine(), gexInProcessEngine()), workDir);
      assert.equal(report.outcome, 'same', `seed ${seed}: ${report.differences.map((d) => d.detail).join('\n')}`);
    }
  });

  it('finds a planted output difference and shrinks the case while keeping it', async () => {
    // gex that appends a byte to every table it writes: a difference wherever a table is written
    const planted: Engine = {
      name: 'gex-planted',
      run: async (dataDir, timeoutMs) => {
        const run = await gexInProcessEngine().run(dataDir, timeoutMs);
        const tables = path.join(dataDir, 'out', 'tables');
        for (const name of await readdir(tables).catch(() => []))
          if (!name.endsWith('.manifest')) await appendFile(path.join(tables, name), 'x');
        return run;
      },
    };
    let seed = 1;
    // a few shrink runs show that shrinking keeps the difference (each run is a pair of gex runs)
    const shrinkRuns = 4;
    let report = await runOneCase(seed, options(gexInProcessEngine(), planted, shrinkRuns), workDir);
    while (report.outcome !== 'different' && seed < 30)
      report = await runOneCase(++seed, options(gexInProcessEngine(), planted, shrinkRuns), workDir);
    assert.equal(report.outcome, 'different');
    assert.match(report.differences[0].where, /^output table/);
    const shrunk = report.shrunk!;
    assert.match(shrunk.differences[0].where, /^output table/);
    assert.ok(shrunk.runs > 0 && shrunk.runs <= shrinkRuns, `shrink runs ${shrunk.runs}`);
    assert.ok(
      toJsonText(shrunk.case as never).length <= toJsonText(caseOfSeed(seed) as never).length,
      'the shrunk case is not larger',
    );
  });
});
