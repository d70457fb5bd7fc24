import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { JobConfig } from '../../../src/extractor/config/job-config.js';
import { PageRecipe } from '../../../src/extractor/jobs/page-records.js';
import { JsonParser } from '../../../src/extractor/output/json-parser/json-parser.js';
import { Spool, type PageSource } from '../../../src/extractor/output/spool.js';
import { CsvFile } from '../../../src/extractor/output/csv-file.js';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { decodeJson, stringifyExact, type JsonObject, type JsonValue } from '../../../src/json/index.js';
import { runExtraction } from '../../support/extraction.js';

/**
 * The parser's queue keeps a page's response body instead of its records, and finds the records in
 * it again only when the queue is replayed (the drafts were dropped). The records found again must
 * be the records the run had, and the tables the same bytes as from the records themselves.
 */
describe('queued response bodies', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'gex-bodies-test-'));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  const job = (fields: Partial<JobConfig> = {}) =>
    ({ dataField: null, responseFilter: [], responseFilterDelimiter: '.', ...fields }) as JobConfig;

  /** A recipe that finds the records of `{"items": […]}` and counts its calls. */
  function countingRecipe() {
    const recipe = new PageRecipe(job({ dataField: { path: 'items', delimiter: '.' } }), [], 3);
    let calls = 0;
    return {
      calls: () => calls,
      records(body: Buffer, status: number) {
        calls++;
        return recipe.records(body, status);
      },
    };
  }

  const body = (text: string) => Buffer.from(text, 'utf8');

  it('a recipe finds the records the page had: dataField, responseFilter, compat levels', () => {
    const text = '{"d":{"list":[{"id":1,"o":{"x":1.0},"s":"é\\u00e9"},{"id":9223372036854775807,"o":""}]}}';
    const found = (compat: number) =>
      stringifyExact(
        new PageRecipe(
          job({ dataField: { path: 'd|list', delimiter: '|' }, responseFilter: ['o'] }),
          [],
          compat,
        ).records(body(text), 200),
      );
    assert.equal(found(3), '[{"id":1,"o":"{\\"x\\":1}","s":"éé"},{"id":9223372036854775807,"o":"\\"\\""}]');
    // compat ≤ 2 leaves PHP-empty values as they are
    assert.equal(found(2), '[{"id":1,"o":"{\\"x\\":1}","s":"éé"},{"id":9223372036854775807,"o":""}]');
    // a single object at the path is one record
    const single = new PageRecipe(job({ dataField: { path: 'user', delimiter: '.' } }), [], 3);
    assert.equal(stringifyExact(single.records(body('{"user":{"id":7}}'), 200)), '[{"id":7}]');
  });

  it('a recipe repeats GE’s recoveries: unpaired surrogates, an ignored error that is not JSON', () => {
    const recipe = new PageRecipe(job({ dataField: { path: '.', delimiter: '.' } }), [404], 3);
    // every \u escape is dropped when one is an unpaired surrogate
    assert.equal(stringifyExact(recipe.records(body('{"a":"x\\ud800y\\u0041"}'), 200)), '[{"a":"xy"}]');
    // an ignored status with a body that is not JSON is data as {"errorData": body}
    assert.equal(stringifyExact(recipe.records(body('Not <b>found</b>'), 404)), '[{"errorData":"Not <b>found</b>"}]');
  });

  it('the queue holds the body bytes as they came, not the records', async () => {
    const spool = await Spool.create(tmp);
    try {
      const recipe = countingRecipe();
      const text = '{"items":[{"id":1,"name":"Ann"}],"marker":"a-unique-marker"}';
      const rows = recipe.records(body(text), 200);
      spool.append({ dataType: 'a', injected: new Map(), rows }, { body: body(text), status: 200, recipe });
      await spool.finish();
      assert.ok((await readFile(spool.file)).includes(body(text)), 'the body is in the queue byte for byte');
      const back = [];
      for await (const batch of spool.read()) back.push(batch);
      assert.equal(stringifyExact(back[0].rows), '[{"id":1,"name":"Ann"}]');
    } finally {
      await spool.dispose();
    }
  });

  it('reads bodies and serialized batches back in order, with their injected columns and recipes', async () => {
    const spool = await Spool.create(tmp);
    const first = countingRecipe();
    const other = new PageRecipe(job(), [], 3);
    // one body larger than the read buffer (1 MB): gathered across several chunks
    const many = Array.from({ length: 40_000 }, (_, i) => `{"id":${i},"t":"${'x'.repeat(40)}"}`);
    const bodies: Array<[string, string, PageSource['recipe'], JsonObject]> = [
      ['a', '{"items":[{"id":1}]}', first, new Map([['parent_id', 5]])],
      ['b', `{"items":[${many.join(',')}]}`, first, new Map()],
      ['c', '[{"k":"v"}]', other, new Map([['u', decodeJson('1.0')]])],
    ];
    try {
      for (const [dataType, text, recipe, injected] of bodies) {
        const source = { body: body(text), status: 200, recipe };
        spool.append({ dataType, injected, rows: recipe.records(source.body, 200) }, source);
        spool.append({ dataType: `${dataType}-serialized`, injected, rows: [new Map([['n', 1]])] });
        await spool.settle();
      }
      const seen: string[] = [];
      for await (const batch of spool.read())
        seen.push(`${batch.dataType} ${stringifyExact(batch.injected)} ${batch.rows.length}`);
      assert.deepEqual(seen, [
        'a {"parent_id":5} 1',
        'a-serialized {"parent_id":5} 1',
        'b {} 40000',
        'b-serialized {} 1',
        'c {"u":1.0} 1',
        'c-serialized {"u":1.0} 1',
      ]);
      // found again only when read: twice for the first recipe's pages (appending called it too)
      assert.equal(first.calls(), 4);
    } finally {
      await spool.dispose();
    }
  });

  it('reports a queue cut inside a body instead of dropping records', async () => {
    const spool = await Spool.create(tmp);
    try {
      const recipe = countingRecipe();
      const text = `{"items":[${'{"id":1},'.repeat(200_000)}{"id":2}]}`;
      spool.append({ dataType: 'a', injected: new Map(), rows: [] }, { body: body(text), status: 200, recipe });
      await spool.finish();
      const { truncate } = await import('node:fs/promises');
      await truncate(spool.file, 1_500_000);
      await assert.rejects(async () => {
        for await (const batch of spool.read()) void batch;
      }, /ends in a truncated batch/);
    } finally {
      await spool.dispose();
    }
  });

  it('a replay from bodies writes the tables a replay from records writes', async () => {
    const recipe = new PageRecipe(
      job({ dataField: { path: 'items', delimiter: '.' }, responseFilter: ['tags'] }),
      [],
      3,
    );
    const pages = [
      '{"items":[{"id":1,"p":1.50,"tags":["a"],"o":{"k":"\\u00e9"}}]}',
      '{"items":[{"id":2,"p":2,"tags":[],"o":null}]}',
      '{"items":[{"id":3,"p":-0.0,"extra":"x","o":{"k":2,"l":[1,2]}}]}',
    ];
    const write = async (withSource: boolean) => {
      const spool = await Spool.create(tmp);
      const parser = new JsonParser(spool, { drafts: false });
      try {
        for (const [i, text] of pages.entries()) {
          const source = { body: body(text), status: 200, recipe };
          const injected = new Map<string, JsonValue>([['page', i + 1]]);
          parser.process(recipe.records(source.body, 200), 'items', injected, withSource ? source : undefined);
          await parser.settle();
        }
        let n = 0;
        const tables = await parser.writeTables(
          () => new CsvFile(path.join(tmp, `${withSource}-${++n}.csv`)),
          () => {},
        );
        const out: string[] = [];
        for (const [name, csv] of tables) {
          await csv.close();
          out.push(name, await readFile(csv.file, 'utf8'));
        }
        return out;
      } finally {
        await parser.dispose();
      }
    };
    const fromBodies = await write(true);
    assert.deepEqual(fromBodies, await write(false));
    // the third page changed the structure: its new columns reach the rows of the first two
    assert.ok(fromBodies.join('\n').includes('"1","1.5","[""a""]","é","","","1"'), fromBodies.join('\n'));
    assert.ok(fromBodies.join('\n').includes('"3","-0","","2",'), fromBodies.join('\n'));
  });

  describe('a run whose structure changes after the first page (the drafts are dropped)', () => {
    let server: FixtureServer;
    before(async () => {
      server = await startFixtureServer({
        handler: (r) => {
          const url = new URL(r.url, 'http://x');
          const child = /^\/users\/(\d+)\/orders$/.exec(url.pathname);
          if (child) return { body: `{"data":{"orders":[{"no":"${child[1]}-1","sum":1.10}]}}` };
          const page = Number(url.searchParams.get('page'));
          if (page === 1) return { body: '{"data":{"users":[{"id":1,"name":"Ann","meta":{"a":1}}]}}' };
          // unpaired surrogate: GE drops every \u escape of the page
          if (page === 2) return { body: '{"data":{"users":[{"id":2,"name":"B\\ud800\\u00e9n","meta":[1]}]}}' };
          if (page === 3) return { body: '{"data":{"users":[{"id":3,"name":"Cy","meta":null,"late":true}]}}' };
          return { body: '{"data":{"users":[]}}' };
        },
      });
    });
    after(() => server.close());

    it('writes the tables from the queued bodies', async () => {
      const run = await runExtraction({
        api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum' } },
        config: {
          outputBucket: 'b',
          userData: { src: 'test' },
          jobs: [
            {
              endpoint: 'users',
              dataField: 'data.users',
              responseFilter: ['meta'],
              children: [
                {
                  endpoint: 'users/{id}/orders',
                  dataType: 'orders',
                  dataField: 'data.orders',
                  placeholders: { id: 'id' },
                },
              ],
            },
          ],
        },
      });
      assert.equal(
        run.files.get('b.users'),
        '"id","name","meta","late","src"\n' +
          '"1","Ann","{""a"":1}","","test"\n' +
          '"2","Bn","[1]","","test"\n' +
          '"3","Cy","null","1","test"\n',
      );
      // the child job's pages were queued as bodies too, with their parent ids beside them
      assert.equal(
        run.files.get('b.orders'),
        '"no","sum","parent_id"\n"1-1","1.1","1"\n"2-1","1.1","2"\n"3-1","1.1","3"\n',
      );
    });
  });
});
