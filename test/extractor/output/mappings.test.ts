import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { outStateText } from '../../support/out-state.js';
import { decodeJson, type JsonObject } from '../../../src/json/index.js';
import { runMapped, runOutput } from '../../support/output.js';

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

describe('mappings: columns', () => {
  it('writes the mapped columns in mapping order, with shorthand, nested paths and missing values empty', async () => {
    const { files } = await runMapped(
      '{"users":{"address.country":{"type":"column","mapping":{"destination":"country"}},"name":"name","id":{"mapping":{"destination":"id"}}}}',
      [
        {
          rows: '[{"id":1,"name":"Ann","address":{"country":"CZ"},"extra":true},{"id":2.5,"address":null}]',
          type: 'users',
        },
      ],
    );
    assert.equal(files.get('b.users'), '"country","name","id"\n"CZ","Ann","1"\n"","","2.5"\n');
    assert.equal(files.get('b.users.manifest'), '{"destination":"in.c-b.users","incremental":false}');
  });

  it('declares primary keys in the manifest, in mapping order, after incremental', async () => {
    const { files } = await runMapped(
      '{"users":{"last":{"mapping":{"destination":"last_name","primaryKey":true}},"age":"age","first":{"mapping":{"destination":"first_name","primaryKey":true}}}}',
      [{ rows: '[{"first":"Jo","last":"Doe","age":5}]', type: 'users' }],
      { incremental: true },
    );
    assert.equal(files.get('b.users'), '"last_name","age","first_name"\n"Doe","5","Jo"\n');
    assert.equal(
      files.get('b.users.manifest'),
      '{"destination":"in.c-b.users","incremental":true,"primary_key":["last_name","first_name"]}',
    );
  });

  it('reads list indexes, the row itself (".") and a custom path delimiter', async () => {
    const { files } = await runMapped(
      '{"rows":{"0":{"mapping":{"destination":"first"}},"2":{"mapping":{"destination":"third"}},"9":{"mapping":{"destination":"none"}}},"tags":{".":"tag"},"deep":{"a/b.c":{"mapping":{"destination":"x"},"delimiter":"/"}}}',
      [
        { rows: '[["d1","u1","n1"]]', type: 'rows' },
        { rows: '["red","blue"]', type: 'tags' },
        { rows: '[{"a":{"b.c":"dotted"}}]', type: 'deep' },
      ],
    );
    assert.equal(files.get('b.rows'), '"first","third","none"\n"d1","n1",""\n');
    assert.equal(files.get('b.tags'), '"tag"\n"red"\n"blue"\n');
    assert.equal(files.get('b.deep'), '"x"\n"dotted"\n');
  });

  it('writes objects and lists as JSON with forceType (a sibling of mapping) and refuses them without', async () => {
    const mapping = (force: string) =>
      `{"users":{"id":"id","tags":{"mapping":{"destination":"tags"}${force}},"o":{"mapping":{"destination":"o"}${force}}}}`;
    const rows = '[{"id":1,"tags":["girls","cars"],"o":{"a/b":0.1,"é":[]}}]';
    const { files } = await runMapped(mapping(',"forceType":true'), [{ rows, type: 'users' }]);
    assert.equal(
      files.get('b.users'),
      '"id","tags","o"\n"1","[""girls"",""cars""]","{""a\\/b"":0.10000000000000001,""\\u00e9"":[]}"\n',
    );
    await assert.rejects(runMapped(mapping(''), [{ rows, type: 'users' }]), (error: Error) => {
      assert.equal(
        error.message,
        "Error saving 'users' data to CSV column: Error writing 'tags,o' column: Cannot write data into column: array (\n  0 => 'girls',\n  1 => 'cars',\n)",
      );
      return true;
    });
  });

  it('takes injected values only through `user` entries (path separator /), never as automatic columns', async () => {
    const { files } = await runMapped(
      '{"users":{"id":"id","country":{"type":"user","mapping":{"destination":"country"}},"geo/city":{"type":"user","mapping":{"destination":"city"}}}}',
      [
        {
          rows: '[{"id":1,"country":"data value"}]',
          type: 'users',
          injected: '{"country":"UK","geo":{"city":"x"},"src":"gex"}',
        },
      ],
    );
    assert.equal(files.get('b.users'), '"id","country","city"\n"1","UK","x"\n');
  });
});

describe('mappings: the "" path and integer-like keys', () => {
  it('reads "" as the property "" of an object record, nothing of a list, and the record itself only when scalar', async () => {
    const { files } = await runMapped(
      '{"objs":{"id":"id","":"self","a":{"type":"table","destination":"sub","tableMapping":{"":"val"}}}}',
      [{ rows: '[{"id":1,"a":{"x":1},"":"own"},{"id":2,"a":[1,[2]]},{"id":3,"a":"s"}]', type: 'objs' }],
    );
    const k1 = md5('O:8:"stdClass":3:{s:2:"id";i:1;s:1:"a";O:8:"stdClass":1:{s:1:"x";i:1;}s:0:"";s:3:"own";}');
    const k2 = md5('O:8:"stdClass":2:{s:2:"id";i:2;s:1:"a";a:2:{i:0;i:1;i:1;a:1:{i:0;i:2;}}}');
    const k3 = md5('O:8:"stdClass":2:{s:2:"id";i:3;s:1:"a";s:1:"s";}');
    assert.equal(files.get('b.objs'), `"id","self","sub"\n"1","own","${k1}"\n"2","","${k2}"\n"3","","${k3}"\n`);
    // the object {"x":1} and the list [2] give no value; the scalars are the rows themselves
    assert.equal(files.get('b.sub'), `"val","objs_pk"\n"","${k1}"\n"1","${k2}"\n"","${k2}"\n"s","${k3}"\n`);
  });

  it('reads integer-like keys as list indexes and object properties', async () => {
    const { files } = await runMapped(
      '{"arrs":{"0":{"mapping":{"destination":"c0"}},"1.2":{"mapping":{"destination":"c12"}},"2":{"mapping":{"destination":"c2","primaryKey":true}},"1":{"type":"table","destination":"kids","tableMapping":{"0":{"mapping":{"destination":"k0"}},"":{"mapping":{"destination":"self"}}}}}}',
      [{ rows: '[["a","b",null],{"0":"x","1":{"2":"y"}},["c",["d","e"]]]', type: 'arrs' }],
    );
    assert.equal(files.get('b.arrs'), '"c0","c12","c2"\n"a","",""\n"x","y",""\n"c","",""\n');
    assert.equal(
      files.get('b.arrs.manifest'),
      '{"destination":"in.c-b.arrs","incremental":false,"primary_key":["c2"]}',
    );
    assert.equal(files.get('b.kids'), '"k0","self","arrs_pk"\n"","b",""\n"","",""\n"","d",""\n"","e",""\n');
  });

  it('does not expand a string under an integer-like key (csvmap expands string keys only)', async () => {
    await assert.rejects(
      runMapped('{"arrs":{"0":"c0","1":"c1"}}', [{ rows: '[["a","b"]]', type: 'arrs' }]),
      (error: Error) => {
        assert.equal(
          error.message,
          "Bad Json to CSV Mapping configuration: Key 'mapping.destination' is not set for column '0'.",
        );
        return true;
      },
    );
    // a key that only looks numeric is a string key and expands
    const { files } = await runMapped('{"arrs":{"01":"c01","-0":"m0"}}', [
      { rows: '[{"01":"x","-0":"y"}]', type: 'arrs' },
    ]);
    assert.equal(files.get('b.arrs'), '"c01","m0"\n"x","y"\n');
  });
});

describe('mappings: child tables, link values and primary keys', () => {
  const user = '{"id":1,"name":"A","tags":["x","y"]}';
  const userSerialized = 'O:8:"stdClass":3:{s:2:"id";i:1;s:4:"name";s:1:"A";s:4:"tags";a:2:{i:0;s:1:"x";i:1;s:1:"y";}}';
  const tagsMapping =
    '{"users":{"id":"id","tags":{"type":"table","destination":"user-tags","tableMapping":{".":"tag"}}}}';

  it('links rows without a primary key by md5(serialize(row)) in a `<table>_pk` column', async () => {
    const { files } = await runMapped(tagsMapping, [
      { rows: `[${user},{"id":2,"tags":[]},{"id":3,"tags":"solo"}]`, type: 'users' },
    ]);
    const link = md5(userSerialized);
    const solo = md5('O:8:"stdClass":2:{s:2:"id";i:3;s:4:"tags";s:4:"solo";}');
    assert.equal(files.get('b.users'), `"id","user-tags"\n"1","${link}"\n"2",""\n"3","${solo}"\n`);
    assert.equal(files.get('b.user-tags'), `"tag","users_pk"\n"x","${link}"\n"y","${link}"\n"solo","${solo}"\n`);
    assert.equal(files.get('b.user-tags.manifest'), '{"destination":"in.c-b.user-tags","incremental":false}');
  });

  it('hashes the injected map too, serialised as a PHP array (integer-like keys as integers)', async () => {
    const injected = '{"src":"x","0":"y"}';
    const { files } = await runMapped(tagsMapping, [{ rows: `[${user}]`, type: 'users', injected }]);
    const link = md5(`${userSerialized}a:2:{s:3:"src";s:1:"x";i:0;s:1:"y";}`);
    assert.equal(files.get('b.users'), `"id","user-tags"\n"1","${link}"\n`);
  });

  it('links by the primary key values (composite joined with ","), with no link column in a keyed table', async () => {
    const { files } = await runMapped(
      '{"users":{"first":{"mapping":{"destination":"first_name","primaryKey":true}},"last":{"mapping":{"destination":"last_name","primaryKey":true}},"interests":{"type":"table","destination":"interests","tableMapping":{".":"interest"}}}}',
      [
        {
          rows: '[{"first":"John","last":"Doe","interests":["girls","cars"]},{"first":true,"last":1.0,"interests":["x"]}]',
          type: 'users',
        },
      ],
    );
    assert.equal(files.get('b.users'), '"first_name","last_name"\n"John","Doe"\n"1","1"\n');
    assert.equal(files.get('b.interests'), '"interest","users_pk"\n"girls","John,Doe"\n"cars","John,Doe"\n"x","1,1"\n');
  });

  it('names the parent key column and adds it to the child primary key (parentKey.destination/primaryKey)', async () => {
    const { files } = await runMapped(
      '{"users":{"id":{"mapping":{"destination":"id","primaryKey":true}},"addresses":{"type":"table","destination":"user-address","parentKey":{"destination":"userId","primaryKey":true},"tableMapping":{"index":{"mapping":{"destination":"index","primaryKey":true}},"street":"street"}}}}',
      [{ rows: '[{"id":7,"addresses":[{"index":0,"street":"Main"},{"index":1,"street":"Side"}]}]', type: 'users' }],
    );
    assert.equal(files.get('b.user-address'), '"index","street","userId"\n"0","Main","7"\n"1","Side","7"\n');
    assert.equal(
      files.get('b.user-address.manifest'),
      '{"destination":"in.c-b.user-address","incremental":false,"primary_key":["index","userId"]}',
    );
    assert.equal(
      files.get('b.users.manifest'),
      '{"destination":"in.c-b.users","incremental":false,"primary_key":["id"]}',
    );
  });

  it('passes the parent key value (not a hash) to grandchildren of a keyed table', async () => {
    const { files } = await runMapped(
      '{"users":{"id":{"mapping":{"destination":"id","primaryKey":true}},"contacts":{"type":"table","destination":"contact","parentKey":{"destination":"userId","primaryKey":true},"tableMapping":{"email":"email","addresses.0":{"type":"table","destination":"address","tableMapping":{"street":"street"}}}}}}',
      [{ rows: '[{"id":123,"contacts":{"email":"e","addresses":[{"street":"Blossom"}]}}]', type: 'users' }],
    );
    assert.equal(files.get('b.contact'), '"email","userId"\n"e","123"\n');
    assert.equal(files.get('b.address'), '"street","contact_pk"\n"Blossom","123"\n');
  });

  it('writes a phantom empty child row for a keyed parent without the child, and nothing for an empty list', async () => {
    const { files } = await runMapped(
      '{"users":{"id":{"mapping":{"destination":"id","primaryKey":true}},"contacts":{"type":"table","destination":"contacts","tableMapping":{"email":"email"}}}}',
      [{ rows: '[{"id":1,"contacts":[{"email":"a"}]},{"id":2},{"id":3,"contacts":[]}]', type: 'users' }],
    );
    assert.equal(files.get('b.contacts'), '"email","users_pk"\n"a","1"\n"","2"\n');
  });

  it('creates the child table of a keyed parent even when it only met an empty list (header only)', async () => {
    const { files } = await runMapped(
      '{"users":{"id":{"mapping":{"destination":"id","primaryKey":true}},"r":{"type":"table","destination":"r","tableMapping":{"x":"x"}}}}',
      [{ rows: '[{"id":1,"r":[]}]', type: 'users' }],
    );
    assert.equal(files.get('b.r'), '"x","users_pk"\n');
    assert.equal(files.get('b.r.manifest'), '{"destination":"in.c-b.r","incremental":false}');
  });

  it('drops link and parent key columns with parentKey.disable', async () => {
    const { files } = await runMapped(
      '{"users":{"id":"id","tags":{"type":"table","destination":"tags","parentKey":{"disable":true},"tableMapping":{".":"tag"}}}}',
      [{ rows: '[{"id":1,"tags":["a"]},{"id":2}]', type: 'users' }],
    );
    assert.equal(files.get('b.users'), '"id"\n"1"\n"2"\n');
    assert.equal(files.get('b.tags'), '"tag"\n"a"\n');
  });

  it('maps children into the same table when the destination is the table itself: children first (EX072)', async () => {
    const { files } = await runMapped(
      '{"people":{"id":"id","kids":{"type":"table","destination":"people","parentKey":{"disable":true}}}}',
      [{ rows: '[{"id":1,"kids":[{"id":11},{"id":12,"kids":[{"id":121}]}]},{"id":2,"kids":[]}]', type: 'people' }],
    );
    assert.equal(files.get('b.people'), '"id"\n"11"\n"121"\n"12"\n"1"\n"2"\n');
    await assert.rejects(
      runMapped('{"people":{"id":"id","kids":{"type":"table","destination":"people"}}}', [
        { rows: '[{"id":1,"kids":[{"id":2}]}]', type: 'people' },
      ]),
      /Bad Json to CSV Mapping configuration: 'parentKey.disable' must be true to parse child values into parent's table/,
    );
  });

  it('refuses a non-scalar primary key value', async () => {
    await assert.rejects(
      runMapped(
        '{"u":{"_id":{"mapping":{"destination":"id","primaryKey":true}},"c":{"type":"table","destination":"c","tableMapping":{"a":"a"}}}}',
        [{ rows: '[{"_id":{"$oid":"5716"},"c":[{"a":1}]}]', type: 'u' }],
      ),
      /^UserError: Bad Json to CSV Mapping configuration: Only scalar values are allowed in primary key\. Primary key: \[\{"\$oid":"5716"\}\]$/,
    );
  });
});

describe('mappings: tables, routing and results', () => {
  it('creates a mapped table at the first batch even when it is empty (the JSON parser writes nothing)', async () => {
    const { files } = await runMapped('{"users":{"id":"id"}}', [
      { rows: '[]', type: 'users' },
      { rows: '[]', type: 'other' },
    ]);
    assert.deepEqual([...files.keys()], ['b.users', 'b.users.manifest']);
    assert.equal(files.get('b.users'), '"id"\n');
  });

  it('sends unmapped dataTypes to the JSON parser of the same bucket; mapped tables come first', async () => {
    const run = await runMapped(
      '{"users":{"id":"id","tags":{"type":"table","destination":"tags","tableMapping":{".":"t"}}},"orders":{"n":"n"}}',
      [
        { rows: '[{"n":1,"list":[1]}]', type: 'auto' },
        { rows: '[{"n":9}]', type: 'orders' },
        { rows: '[{"id":5,"tags":["q"]}]', type: 'users' },
      ],
    );
    const id = `auto_${md5('O:8:"stdClass":2:{s:1:"n";i:1;s:4:"list";a:1:{i:0;i:1;}}')}`;
    assert.equal(run.files.get('b.auto'), `"n","list"\n"1","${id}"\n`);
    assert.equal(run.files.get('b.auto_list'), `"data","JSON_parentId"\n"1","${id}"\n`);
    assert.equal(run.files.get('b.orders'), '"n"\n"9"\n');
    // mappers in `mappings` order (own table, then children), then the fallback's tables
    assert.deepEqual(run.written, ['b.users', 'b.tags', 'b.orders', 'b.auto', 'b.auto_list']);
  });

  it('appends the rows of a second source of the same table when the headers match, and fails when they differ', async () => {
    const merged = await runMapped(
      '{"a":{"x":"x","kids":{"type":"table","destination":"shared","tableMapping":{"k":"k"},"parentKey":{"disable":true}}},"b":{"k":"k"}}',
      [
        { rows: '[{"x":1,"kids":[{"k":"from a"}]}]', type: 'a' },
        { rows: '[{"k":"from b"}]', type: 'b' },
        { rows: '[{"k":"from json"}]', type: 'shared' },
      ],
    );
    assert.equal(merged.files.get('b.shared'), '"k"\n"from a"\n"from json"\n');
    assert.equal(merged.files.get('b.b'), '"k"\n"from b"\n');
    await assert.rejects(
      runMapped('{"a":{"x":"x"}}', [
        { rows: '[{"x":1}]', type: 'a' },
        { rows: '[{"z":1}]', type: 'a_' },
      ]),
      /^UserError: Multiple results for 'a' table have different columns!$/,
    );
  });

  it('checks the mapping configuration', async () => {
    await assert.rejects(runMapped('{"users":{}}', []), /Empty mapping for 'users' data type in 'mappings' config\./);
    await assert.rejects(
      runMapped('{"users":"id"}', []),
      /Mapping must be 'array' type, 'string' type given, for 'users' data type in 'mappings' config\./,
    );
    await assert.rejects(
      runMapped('{"u":{"id":{"type":"column"}}}', [{ rows: '[]', type: 'u' }]),
      /Key 'mapping\.destination' is not set for column 'id'\./,
    );
    await assert.rejects(
      runMapped('{"u":{"t":{"type":"table","tableMapping":{"a":"a"}}}}', [{ rows: '[{"t":[1]}]', type: 'u' }]),
      /Key 'destination' is not set for table 't'\./,
    );
    await assert.rejects(
      runMapped('{"u":{"t":{"type":"table","destination":"t"}}}', [{ rows: '[{"t":[1]}]', type: 'u' }]),
      /Key 'tableMapping' is not set for table 't'\./,
    );
  });

  it('writes mapper rows to their file page by page, before the run ends (memory stays flat)', async () => {
    const sizes: number[] = [];
    const rows = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: i, name: `name ${i}` })));
    await runOutput(
      [
        {
          mappings: '{"users":{"id":"id","name":"name"}}',
          batches: [
            { rows, type: 'users' },
            { rows, type: 'users' },
          ],
        },
      ],
      {
        afterPage: async (tmpDir) => {
          const [work] = (await readdir(tmpDir)).filter((d) => d.startsWith('gex-mappings-'));
          sizes.push((await stat(path.join(tmpDir, work, 'table-1.csv'))).size);
        },
      },
    );
    const header = Buffer.byteLength('"id","name"\n');
    const page = Array.from({ length: 200 }, (_, i) => Buffer.byteLength(`"${i}","name ${i}"\n`)).reduce(
      (a, b) => a + b,
      0,
    );
    assert.deepEqual(sizes, [header + page, header + 2 * page]);
  });
});

describe('mappings: state', () => {
  it('leaves the parser keys of the state as they were (a fresh state gets only time)', async () => {
    const { state } = await runMapped('{"users":{"id":"id"}}', [
      { rows: '[{"id":1}]', type: 'users' },
      { rows: '[{"x":1}]', type: 'unmapped' },
    ]);
    assert.equal(state, undefined);
    assert.equal(outStateText(new Map(), 1500000000, state), '{"time":{"previousStart":1500000000}}');
    const input = decodeJson(
      '{"json_parser.struct":{"data":[],"parent_aliases":[]},"json_parser.structVersion":3,"time":{"previousStart":1}}',
    ) as JsonObject;
    assert.equal(
      outStateText(input, 2, state),
      '{"json_parser.struct":{"data":[],"parent_aliases":[]},"json_parser.structVersion":3,"time":{"previousStart":2}}',
    );
  });
});
