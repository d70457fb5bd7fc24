import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { runExtraction } from '../../support/extraction.js';
import { stateFileText } from '../../../src/extractor/extractor-state.js';

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

/** Mappings, the legacy parser, header-only tables and the state, through `extract()` against a real server. */
describe('output features end to end (mappings, legacy parser, empty tables)', () => {
  let server: FixtureServer;

  before(async () => {
    server = await startFixtureServer({
      handler: (r) => {
        const url = new URL(r.url, 'http://x');
        if (url.pathname === '/users')
          return { body: '[{"id":1,"name":"Ann","tags":["a","b"]},{"id":2,"name":"Bob"}]' };
        const orders = /^\/users\/(\d+)\/orders$/.exec(url.pathname);
        if (orders) return { body: orders[1] === '1' ? '[{"id":"o1","total":1.50},{"id":"o2","total":3}]' : '[]' };
        const detail = /^\/user\/(\d+)$/.exec(url.pathname);
        if (detail) return { body: `{"id":${detail[1]},"parent_id":"admins","address":{"city":"C${detail[1]}"}}` };
        if (url.pathname === '/stats') return { body: '[{"k":"v","list":[1]}]' };
        if (url.pathname === '/empty') return { body: '[]' };
        return undefined;
      },
    });
  });
  after(() => server.close());

  it('maps parent and child jobs, takes injected values through user entries, and falls back to the JSON parser', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        outputBucket: 'shop',
        userData: { source: 'gex' },
        jobs: [
          {
            endpoint: 'users',
            children: [{ endpoint: 'users/{user-id}/orders', dataType: 'orders', placeholders: { 'user-id': 'id' } }],
          },
          { endpoint: 'stats' },
        ],
        mappings: {
          users: {
            id: { mapping: { destination: 'id', primaryKey: true } },
            name: 'name',
            source: { type: 'user', mapping: { destination: 'src' } },
            tags: { type: 'table', destination: 'user-tags', tableMapping: { '.': 'tag' } },
          },
          orders: {
            id: 'id',
            total: 'total',
            parent_id: { type: 'user', mapping: { destination: 'user_id' } },
            lines: { type: 'table', destination: 'order-lines', tableMapping: { sku: 'sku' } },
          },
          never: { x: { mapping: { destination: 'x', primaryKey: true } } },
        },
      },
    });
    const f = run.files;
    assert.equal(f.get('shop.users'), '"id","name","src"\n"1","Ann","gex"\n"2","Bob","gex"\n');
    assert.equal(
      f.get('shop.users.manifest'),
      '{"destination":"in.c-shop.users","incremental":false,"primary_key":["id"]}',
    );
    // a keyed parent without tags still gets a (phantom) child row
    assert.equal(f.get('shop.user-tags'), '"tag","users_pk"\n"a","1"\n"b","1"\n"","2"\n');
    // global userData is not applied to child jobs; the parent column is reachable through `user`
    assert.equal(f.get('shop.orders'), '"id","total","user_id","order-lines"\n"o1","1.5","1",""\n"o2","3","1",""\n');
    // unmapped: the JSON parser, with the config's userData appended (and hashed) as usual
    const statsId = `stats_${md5('O:8:"stdClass":3:{s:1:"k";s:1:"v";s:4:"list";a:1:{i:0;i:1;}s:6:"source";s:3:"gex";}')}`;
    assert.equal(f.get('shop.stats'), `"k","list","source"\n"v","${statsId}","gex"\n`);
    // never produced: header-only tables written after all others (MissingTableHelper)
    assert.equal(f.get('shop.never'), '"x"\n');
    assert.equal(
      f.get('shop.never.manifest'),
      '{"incremental":false,"destination":"in.c-shop.never","primary_key":["x"]}',
    );
    assert.equal(f.get('shop.order-lines'), '"sku","orders_pk"\n');
    assert.deepEqual(
      run.result.tables.map((t) => t.file),
      [
        'shop.users',
        'shop.user-tags',
        'shop.orders',
        'shop.stats',
        'shop.stats_list',
        'shop.order-lines',
        'shop.never',
      ],
    );
    // with mappings GE does not refresh the parser structure: a fresh state gets only time
    assert.equal(stateFileText(run.result.state), '{"time":{"previousStart":1700000000}}');
  });

  it('runs the legacy parser for compatLevel 1 (md5 duplicate columns, overwritten data, version-2 state)', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        outputBucket: 'old',
        compatLevel: 1,
        jobs: [
          {
            endpoint: 'users',
            children: [
              {
                endpoint: 'user/{user-id}',
                dataField: '.',
                dataType: 'user-detail',
                placeholders: { 'user-id': 'id' },
              },
            ],
          },
        ],
      },
    });
    const f = run.files;
    assert.equal(
      f.get('old.user-detail'),
      `"id","parent_id","address_city","${md5('parent_id')}"\n"1","1","C1",""\n"2","2","C2",""\n`,
    );
    assert.match(f.get('old.users')!, /^"id","name","tags"\n"1","Ann","users_[0-9a-f]{32}"\n"2","Bob",""\n$/);
    assert.equal(
      stateFileText(run.result.state),
      '{"time":{"previousStart":1700000000},"json_parser.struct":{"users.tags":{"data":"scalar"},"users":{"id":"scalar","name":"scalar","tags":"arrayOfscalar"},' +
        '"user-detail.address":{"city":"scalar"},"user-detail":{"id":"scalar","parent_id":"scalar","address":"object"}},"json_parser.structVersion":2}',
    );
    assert.match(run.logs, /Using legacy JSON parser, because it has been explicitly requested\./);
  });

  it('runs the legacy parser for a version-2 state: known empty types still get their header', async () => {
    const state = {
      'json_parser.struct': { empty: { id: 'scalar', note: 'scalar' } },
      'json_parser.structVersion': 2,
      time: { previousStart: 5 },
    };
    const run = await runExtraction(
      {
        api: { baseUrl: `${server.url}/` },
        config: { outputBucket: 'inc', incrementalOutput: true, compatLevel: 3, jobs: [{ endpoint: 'empty' }] },
      },
      { state },
    );
    assert.equal(run.files.get('inc.empty'), '"id","note"\n');
    assert.equal(run.files.get('inc.empty.manifest'), '{"destination":"in.c-inc.empty","incremental":true}');
    assert.equal(
      stateFileText(run.result.state),
      '{"json_parser.struct":{"empty":{"id":"scalar","note":"scalar"}},"json_parser.structVersion":2,"time":{"previousStart":1700000000}}',
    );
    assert.match(run.logs, /Using legacy JSON parser, because it is in configuration state\./);
  });

  it('keeps the new parser for compatLevel 0 and for a version-3 state even with compatLevel 1', async () => {
    const zero = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: { compatLevel: 0, jobs: [{ endpoint: 'user/1', dataField: '.' }] },
    });
    assert.ok(zero.files.has('user_1'), [...zero.files.keys()].join());
    const state = { 'json_parser.struct': { data: [], parent_aliases: [] }, 'json_parser.structVersion': 3 };
    const upgraded = await runExtraction(
      {
        api: { baseUrl: `${server.url}/` },
        config: { compatLevel: 1, jobs: [{ endpoint: 'user/1', dataField: '.' }] },
      },
      { state },
    );
    assert.ok(upgraded.files.has('user_1'), [...upgraded.files.keys()].join());
    assert.match(upgraded.logs, /Ignored request for legacy JSON parser, because configuration is already upgraded\./);
    assert.match(
      stateFileText(upgraded.result.state),
      /"json_parser\.structVersion":3,"time":\{"previousStart":1700000000\}\}$/,
    );
  });

  it('sets incremental from the last iteration of each bucket; header-only tables use the incrementalOutput of the first config that writes them', async () => {
    const run = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: { outputBucket: 'main', jobs: [{ endpoint: 'stats' }], mappings: { m: { x: 'x' } } },
      iterations: [
        { incrementalOutput: true },
        { outputBucket: 'other', incrementalOutput: true, incremental: true },
        { incrementalOutput: false },
      ],
    });
    assert.equal(run.files.get('main.stats.manifest'), '{"destination":"in.c-main.stats","incremental":false}');
    assert.equal(run.files.get('other.stats.manifest'), '{"destination":"in.c-other.stats","incremental":true}');
    assert.equal(run.files.get('main.m.manifest'), '{"incremental":true,"destination":"in.c-main.m"}');
    assert.equal(run.files.get('other.m.manifest'), '{"incremental":true,"destination":"in.c-other.m"}');
  });
  it('merges userData as PHP array_merge (integer keys renumbered), takes lists, and refuses keys the JSON parser crashes on', async () => {
    // verified against GE: the config's userData merged with the job's renumbers integer-like keys
    const legacy = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        outputBucket: 'ud',
        compatLevel: 1,
        // (JavaScript orders integer keys first, so the fixture lists them first)
        userData: { 5: 'five', 7: 'seven', a: 'A' },
        jobs: [
          { endpoint: 'stats', userData: { 9: 'nine', b: 'B' } },
          { endpoint: 'empty', dataType: 'e' },
        ],
      },
    });
    assert.match(
      legacy.files.get('ud.stats')!,
      /^"k","list","0","1","a","2","b"\n"v","stats_[0-9a-f]{32}","five","seven","A","nine","B"\n$/,
    );
    const list = await runExtraction({
      api: { baseUrl: `${server.url}/` },
      config: {
        outputBucket: 'ud',
        jobs: [{ endpoint: 'stats', userData: ['x', 'y'] }],
        mappings: { stats: { k: 'k', 1: { type: 'user', mapping: { destination: 'second' } } } },
      },
    });
    assert.equal(list.files.get('ud.stats'), '"second","k"\n"y","v"\n');
    for (const userData of [{ 0: 'zero' }, ['x'], { nodeType: 'n' }]) {
      await assert.rejects(
        runExtraction({
          api: { baseUrl: `${server.url}/` },
          config: { outputBucket: 'ud', userData, jobs: [{ endpoint: 'stats' }] },
        }),
        /^UserError: The userData key "(0|nodeType)" is (an integer|a name the parser reserves): Generic Extractor's JSON parser fails on it\./,
      );
    }
  });
});
