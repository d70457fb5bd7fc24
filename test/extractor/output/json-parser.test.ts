import assert from 'node:assert/strict';
import { outStateText } from '../../support/out-state.js';
import { decodeJson, type JsonObject } from '../../../src/json/index.js';
import { runOutput } from '../../support/output.js';
import { parse, table } from '../../support/parser.js';
import { cachedEntryKeys, MAX_ENTRY_KEYS } from '../../../src/extractor/output/json-parser/schema-node.js';

describe('JSON parser: tables and edge cases', () => {
  it('writes no table (and no manifest) for [] and [null]', async () => {
    assert.equal((await parse([{ rows: '[]' }, { rows: '[null]' }])).files.size, 0);
  });

  it('[{}] is a table without header and one empty row', async () => {
    assert.equal(await table('[{}]'), '\n');
  });

  it('[null, null] is two empty rows', async () => {
    assert.equal(await table('[null, null]'), '\n\n');
  });

  it('scalar rows go to a data column', async () => {
    assert.equal(await table('[1,"two",null,true,2.5]'), '"data"\n"1"\n"two"\n""\n"1"\n"2.5"\n');
  });

  it('keeps integer-like keys in their order and flattens nested objects', async () => {
    assert.equal(
      await table('[{"0":"zero","1":"one","10":{"20":"x"}},{"1":"uno"}]'),
      '"0","1","10_20"\n"zero","one","x"\n"","uno",""\n',
    );
  });

  it('leaves cells of null or missing objects empty', async () => {
    assert.equal(
      await table('[{"id":1,"o":{"x":1}},{"id":2,"o":null},{"id":3}]'),
      '"id","o_x"\n"1","1"\n"2",""\n"3",""\n',
    );
  });

  it('empty objects never make columns', async () => {
    assert.equal(await table('[{"id":1,"o":{}},{"id":2,"o":{"x":{}}}]'), '"id"\n"1"\n"2"\n');
  });

  it('null items of a list of objects become empty child rows', async () => {
    const { files } = await parse([{ rows: '[{"id":1,"objs":[{"k":1},null,{"k":2}]}]' }]);
    assert.match(
      files.get('b.a_objs')!,
      /^"k","JSON_parentId"\n"1","a_dbf2[0-9a-f]{28}"\n"","a_dbf2[0-9a-f]{28}"\n"2","a_dbf2[0-9a-f]{28}"\n$/,
    );
  });

  it('links child tables by the md5 of the PHP-serialised row (EX010)', async () => {
    const { files } = await parse([
      {
        rows: '[{"id":123,"name":"John Doe","tags":["active","admin"]},{"id":234,"name":"Jane Doe","tags":["active"]}]',
        type: 'users',
      },
    ]);
    assert.equal(
      files.get('b.users'),
      '"id","name","tags"\n"123","John Doe","users_3ca896f39b257a4f2d2f4784e7680c87"\n"234","Jane Doe","users_a15f4be71e739e1b2ea32bd4209d756e"\n',
    );
    assert.equal(
      files.get('b.users_tags'),
      '"data","JSON_parentId"\n"active","users_3ca896f39b257a4f2d2f4784e7680c87"\n"admin","users_3ca896f39b257a4f2d2f4784e7680c87"\n"active","users_a15f4be71e739e1b2ea32bd4209d756e"\n',
    );
    assert.equal(files.get('b.users.manifest'), '{"destination":"in.c-b.users","incremental":false}');
  });

  it('a list inside a list is written as JSON text', async () => {
    assert.equal(await table('[1,[2],[3,[4]]]'), '"data"\n"1"\n"[2]"\n"[3,[4]]"\n');
    const { files } = await parse([{ rows: '[{"a":[["c","d"],["e","f"]]}]', type: 'T' }]);
    assert.match(
      files.get('b.T_a')!,
      /^"data","JSON_parentId"\n"\[""c"",""d""\]","T_[0-9a-f]{32}"\n"\[""e"",""f""\]","T_[0-9a-f]{32}"\n$/,
    );
  });

  it("warns like GE for each list inside a list (the JSON parser's analysis)", async () => {
    const run = await runOutput([
      {
        batches: [
          { rows: '[[1,2],[]]', type: 'n' },
          { rows: '[{"a":[[1],"x"],"b":{"c":[[]]}}]', type: 'o' },
        ],
      },
    ]);
    const warnings = run.logs.split('\n').filter((line) => line.includes('WARN'));
    assert.deepEqual(
      warnings.map((line) => line.replace(/^.*WARN +/, '')),
      [
        "Converting nested array 'n.[]' to JSON string.",
        "Converting nested array 'n.[]' to JSON string.",
        "Converting nested array 'o.[].a.[]' to JSON string.",
        "Converting nested array 'o.[].b.c.[]' to JSON string.",
      ],
    );
    assert.equal(run.files.get('b.n'), '"data"\n"[1,2]"\n"[]"\n');
    // a key that could break the log line is quoted
    const hostile = await runOutput([{ batches: [{ rows: '[{"a\\nb":[[1]]}]', type: 'h' }] }]);
    assert.match(hostile.logs, /Converting nested array '"h\.\[\]\.a\\nb\.\[\]"' to JSON string\./);
  });

  it('the default bucket writes plain table names and manifests without destination', async () => {
    const { files } = await parse([{ rows: '[{"x":1}]', type: 'rows' }], { bucket: null });
    assert.deepEqual([...files.keys()], ['rows', 'rows.manifest']);
    assert.equal(files.get('rows.manifest'), '{"incremental":false}');
  });
});

describe('JSON parser: column names', () => {
  it('resolves sanitising conflicts with _u0, _u1 in schema order', async () => {
    assert.equal(
      (await table('[{"a_b":1,"a":{"b":2,"c":{"d":3}},"a.b":4}]'))!.split('\n')[0],
      '"a_b","a_b_u0","a_c_d","a_b_u1"',
    );
    assert.equal((await table('[{"a":{"c":{"d":2}},"a_c":1}]'))!.split('\n')[0], '"a_c_d","a_c_u0"');
    assert.equal((await table('[{"_id":5,"id":6}]'))!.split('\n')[0], '"id","id_u0"');
  });

  it('renames PHP-empty names on the next naming pass', async () => {
    assert.equal((await table('[{"0":1,"":2,"x":3}]'))!.split('\n')[0], '"0","","x"');
    const two = await parse([{ rows: '[{"0":1,"":2,"x":3}]' }, { rows: '[{"0":4}]' }]);
    assert.equal(two.files.get('b.a')!.split('\n')[0], '"0_u0","_u0","x"');
  });

  it('headers cover the whole run: a column first seen later is in the header from row one', async () => {
    const { files } = await parse([
      { rows: '[{"id":1,"name":"A"}]' },
      { rows: '[{"id":2,"name":"B","married":true}]' },
    ]);
    assert.equal(files.get('b.a'), '"id","name","married"\n"1","A",""\n"2","B","1"\n');
  });

  it('records with ever new property names: every column written, the cache of entry keys stays bounded', async () => {
    // the attack: a response whose objects never repeat a property name
    const count = MAX_ENTRY_KEYS + 500;
    const record = Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, i]));
    const { files } = await parse([{ rows: JSON.stringify([record, { p0: 'x' }]) }]);
    const [header, first, second] = files.get('b.a')!.split('\n');
    assert.equal(
      header,
      Object.keys(record)
        .map((k) => `"${k}"`)
        .join(','),
    );
    assert.equal(
      first,
      Object.values(record)
        .map((v) => `"${v}"`)
        .join(','),
    );
    assert.equal(second, ['"x"', ...Array.from({ length: count - 1 }, () => '""')].join(','));
    assert.ok(cachedEntryKeys() <= MAX_ENTRY_KEYS, `${cachedEntryKeys()} entry keys cached`);
  });

  it('new keys appear inside their object group, not at the end', async () => {
    const { files } = await parse([{ rows: '[{"p":{"a":1},"q":1},{"p":{"a":2,"b":3},"q":2}]' }]);
    assert.equal(files.get('b.a')!.split('\n')[0], '"p_a","p_b","q"');
  });
});

describe('JSON parser: type changes', () => {
  it('upgrades a scalar to a list of scalars', async () => {
    const { files } = await parse([{ rows: '[{"id":1,"tags":"x"},{"id":2,"tags":["y","z"]}]' }]);
    assert.match(
      files.get('b.a_tags')!,
      /^"data","JSON_parentId"\n"x","a_[0-9a-f]{32}"\n"y","a_[0-9a-f]{32}"\n"z","a_[0-9a-f]{32}"\n$/,
    );
  });

  it('reproduces the null/array quirk: the child table loses its data column', async () => {
    const { files } = await parse([{ rows: '[{"id":1,"tags":["a"]},{"id":2,"tags":null}]' }]);
    assert.equal(files.get('b.a_tags'), '"JSON_parentId"\n"a_5361242c7026508696a9957ca8d30df9"\n');
  });

  it('a later non-empty list restores the item type', async () => {
    const { files } = await parse([{ rows: '[{"tags":["a"]},{"tags":null},{"tags":["b"]}]' }]);
    assert.match(files.get('b.a_tags')!, /^"data","JSON_parentId"\n"a","a_[0-9a-f]{32}"\n"b","a_[0-9a-f]{32}"\n$/);
  });

  it('fails clearly on incompatible types', async () => {
    await assert.rejects(
      parse([{ rows: '[{"x":1},{"x":{"y":1}}]' }]),
      /Error parsing response JSON: Unhandled nodeType change from "scalar" to "object" in "a\.\[\]\.x"/,
    );
    // the node type is recorded before the list check runs, so GE reports the type change
    await assert.rejects(
      parse([{ rows: '[1,{"a":1}]' }]),
      /Unhandled nodeType change from "scalar" to "object" in "a\.\[\]"/,
    );
  });
});

describe('JSON parser: injected columns (userData, parent_*)', () => {
  it('hashes rows with the renamed injected keys moved to the end when the table is created, in given order later', async () => {
    // verified against GE: the row ids depend on the order of the keys PHP serialises
    const rows =
      '[{"id":1,"0":"a","x":[{"JSON_parentId":"own","v":1},{"v":2}],"u":"data-u","parent_id":"p-own"},{"id":2,"x":[{"v":3}]}]';
    const injected = '{"u":"U","JSON_parentId":"P","parent_id":"UP"}';
    const { files } = await parse([
      { rows, type: 'c1', injected },
      { rows, type: 'c1', injected },
    ]);
    const ids = [
      'fbe34b1c984b21e84f13484e8fec1d6b',
      'd45fa17389dabd1127afdab2d8b70a3b',
      'df326b82ea8b30f4a42906d2d5a675ae',
      'ce5b5fc45bc199ee868ae64fdbd75942',
    ];
    assert.equal(
      files.get('b.c1'),
      '"id","0_u0","x","u","parent_id","u_u0","JSON_parentId","parent_id_u0"\n' +
        `"1","a","c1_${ids[0]}","data-u","p-own","U","P","UP"\n"2","","c1_${ids[1]}","","","U","P","UP"\n` +
        // GE's ragged rows: later batches write the injected cells in the order given
        `"1","a","c1_${ids[2]}","data-u","p-own","U","","UP","P"\n"2","","c1_${ids[3]}","","","U","","UP","P"\n`,
    );
    assert.equal(
      files.get('b.c1_x'),
      `"JSON_parentId","v","JSON_parentId_u0"\n"own","1","c1_${ids[0]}"\n"","2","c1_${ids[0]}"\n"","3","c1_${ids[1]}"\n"own","1","c1_${ids[2]}"\n"","2","c1_${ids[2]}"\n"","3","c1_${ids[3]}"\n`,
    );
  });

  it('renames an injected key that is a data column of an existing table on every row, as GE (ragged rows)', async () => {
    // verified against GE: three iterations of one bucket with different userData
    const rows = '[{"id":1,"u":"du","x":[{"a":1}]},{"id":2}]';
    const { files } = await parse([
      { rows, type: 't' },
      { rows, type: 't', injected: '{"u":"U1","v":"V1"}' },
      { rows, type: 't', injected: '{"u":"U2","id":"I2"}' },
    ]);
    assert.equal(
      files.get('b.t'),
      '"id","u","x"\n"1","du","t_579fd43bb9b77001f88f9b8ae73b7cf2"\n"2","",""\n' +
        '"1","U1","t_f920dd5c2314bd47bb0f5386551fd1c6","","V1"\n"2","U1","","","V1",""\n' +
        '"I2","du","t_c4483684560bcf56ab04f510c69f0c7f","","","U2",""\n"I2","","","","","U2","",""\n',
    );
    // the same when the queue is replayed at the end instead of kept as draft tables
    const batches = [
      { rows, type: 't' },
      { rows, type: 't', injected: '{"u":"U1","v":"V1"}' },
      { rows, type: 't', injected: '{"u":"U2","id":"I2"}' },
    ];
    const replayed = await runOutput([{ batches }], { drafts: false });
    assert.equal(replayed.files.get('b.t'), files.get('b.t'));
  });

  it('renames a clashing injected column and remembers the rename for later tables (EX076)', async () => {
    const injected = '{"tag":"development","price":"$10"}';
    const { files } = await parse([
      { rows: '[{"id":123,"name":"John Doe","tag":"CFO"}]', type: 'users', injected },
      { rows: '[{"order_id":98765432,"price":"$42"}]', type: 'orders', injected },
    ]);
    assert.equal(
      files.get('b.users'),
      '"id","name","tag","tag_u0","price"\n"123","John Doe","CFO","development","$10"\n',
    );
    assert.equal(
      files.get('b.orders'),
      '"order_id","price","tag_u0","price_u0"\n"98765432","$42","development","$10"\n',
    );
  });

  it('keeps the frozen header when a later batch adds an injected column (ragged rows, as GE)', async () => {
    const { files } = await parse([
      { rows: '[{"id":1,"name":"A"}]', type: 'x' },
      { rows: '[{"id":1,"name":"A","extra":"e"}]', type: 'x', injected: '{"parent_id":1}' },
    ]);
    assert.equal(files.get('b.x'), '"id","name","extra"\n"1","A",""\n"1","A","e","1"\n');
  });

  it('renders injected booleans like PHP', async () => {
    assert.equal(
      (await parse([{ rows: '[{"id":1}]', injected: '{"flag":true,"off":false}' }])).files.get('b.a'),
      '"id","flag","off"\n"1","1",""\n',
    );
  });
});

describe('JSON parser: saved structure', () => {
  it('saves the structure in GE format', async () => {
    const { state } = await parse([{ rows: '[{"id":1,"name":"A","tags":["x"]}]', type: 'users' }]);
    assert.equal(
      outStateText(new Map(), 1500000000, state),
      '{"time":{"previousStart":1500000000},"json_parser.struct":{"data":{"_users":{"[]":{"_id":{"nodeType":"scalar","headerNames":"id"},' +
        '"_name":{"nodeType":"scalar","headerNames":"name"},"_tags":{"[]":{"nodeType":"scalar","headerNames":"data"},"nodeType":"array","headerNames":"tags"},' +
        '"nodeType":"object","headerNames":"data"},"nodeType":"array"}},"parent_aliases":[]},"json_parser.structVersion":3}',
    );
  });

  it('an empty run saves an empty structure and keeps other state keys in order', async () => {
    const { state } = await parse([]);
    const input = decodeJson('{"custom":{"a":1},"time":{"previousStart":5,"currentStart":6}}') as JsonObject;
    assert.equal(
      outStateText(input, 7, state),
      '{"custom":{"a":1},"time":{"previousStart":7},"json_parser.struct":{"data":[],"parent_aliases":[]},"json_parser.structVersion":3}',
    );
  });

  it('a loaded structure keeps known columns even when the data lacks them', async () => {
    const struct =
      '{"data":{"_a":{"[]":{"_id":{"nodeType":"scalar","headerNames":"id"},"_previous":{"nodeType":"scalar","headerNames":"previous"},"nodeType":"object","headerNames":"data"},"nodeType":"array"}},"parent_aliases":[]}';
    const { files } = await parse([{ rows: '[{"id":1,"new":2}]' }], { struct });
    assert.equal(files.get('b.a'), '"id","previous","new"\n"1","","2"\n');
  });
});
