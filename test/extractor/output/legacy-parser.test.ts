import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import v8 from 'node:v8';
import { outStateText } from '../../support/out-state.js';
import { legacySafeName } from '../../../src/php/safe-names.js';
import { runOutput, type OutputBatch } from '../../support/output.js';

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

/** One config with compatLevel 1 in bucket `b`. */
const legacy = (batches: OutputBatch[], options: Parameters<typeof runOutput>[1] = {}) =>
  runOutput([{ compatLevel: 1, batches }], options);
const modern = (batches: OutputBatch[]) => runOutput([{ batches }]);

describe('legacy parser: names', () => {
  const cases: Array<[string, string]> = [
    ['user/{id}', 'user__id'],
    ['user/{id}.tags', 'user__id__tags'],
    ['__a b__', 'a_b'],
    ['ú', ''],
    // shortened on the raw name: one word run → md5 of the raw name + tail
    [
      'a-very-long-data-type-name-that-goes-on-and-on-and-on-beyond-sixty-four',
      md5('a-very-long-data-type-name-that-goes-on-and-on-and-on-beyond-sixty-four'),
    ],
    [
      'data_modules_DistributionGroups_outputs_groupCharacteristics_persistent',
      'd__DistributionGroups_outputs_groupCharacteristics_persistent',
    ],
  ];
  for (const [raw, expected] of cases) it(`${raw} -> ${expected}`, () => assert.equal(legacySafeName(raw), expected));

  it('names tables without collapsing `_` and keeps the raw type in row ids', async () => {
    const { files } = await legacy([{ rows: '[{"id":1,"tags":["x"]}]', type: 'user/{id}' }]);
    const id = `user/{id}_${md5('O:8:"stdClass":2:{s:2:"id";i:1;s:4:"tags";a:1:{i:0;s:1:"x";}}')}`;
    assert.equal(files.get('b.user__id'), `"id","tags"\n"1","${id}"\n`);
    assert.equal(files.get('b.user__id__tags'), `"data","JSON_parentId"\n"x","${id}"\n`);
    assert.equal(files.get('b.user__id__tags.manifest'), '{"destination":"in.c-b.user__id__tags","incremental":false}');
    const { files: newer } = await modern([{ rows: '[{"id":1,"tags":["x"]}]', type: 'user/{id}' }]);
    assert.deepEqual(
      [...newer.keys()].filter((f) => !f.endsWith('.manifest')),
      ['b.user_id', 'b.user_id_tags'],
    );
  });

  it('shortens long nested column names level by level (docs example)', async () => {
    const rows =
      '[{"data":{"modules":{"#DistributionGroups":{"outputs":{"groupCharacteristics":{"persistent":true}}}}}}]';
    assert.equal(
      (await legacy([{ rows }])).files.get('b.a'),
      '"d__m__DistributionGroups_outputs_groupCharacteristics_persistent"\n"1"\n',
    );
    assert.equal(
      (await modern([{ rows }])).files.get('b.a'),
      '"DistributionGroups_outputs_groupCharacteristics_persistent"\n"1"\n',
    );
  });
});

describe('legacy parser: duplicate names and values', () => {
  it('replaces a repeated header name by the md5 of its raw name, and the injected value wins (EX125)', async () => {
    const { files } = await legacy([
      {
        rows: '[{"id":123,"name":"John Doe","tag":"CFO"}]',
        type: 'users',
        injected: '{"tag":"development","price":"$10"}',
      },
    ]);
    assert.equal(md5('tag'), 'e4d23e841d8e8804190027bce3180fa5');
    assert.equal(
      files.get('b.users'),
      '"id","name","tag","e4d23e841d8e8804190027bce3180fa5","price"\n"123","John Doe","development","","$10"\n',
    );
  });

  it('lets the last of two properties with the same sanitised name win', async () => {
    const { files } = await legacy([{ rows: '[{"id":1,"addr":{"a.b":1,"a_b":2}}]' }]);
    assert.equal(files.get('b.a'), `"id","addr_a_b","addr_${md5('a_b')}"\n"1","2",""\n`);
  });
});

describe('legacy parser: integer-like keys', () => {
  it('keeps integer-like keys as columns in first-seen order, also in nested objects and child tables', async () => {
    const { files, state } = await legacy([
      {
        rows: '[{"0":"a","1":{"2":"b","x":[1]},"id":5,"Id":6,"i d":7,"i_d":8,"":"empty","-1":"neg","01":"lead","1.5":"dot"},{"0":"c","1":{"2":"d"},"10":"ten"}]',
        type: 'l1',
      },
      { rows: '[{"2":"two","0":"zero","1":"one"},{"1":"one2","3":"three"}]', type: 'l4' },
      { rows: '[{"b":[{"0":"x","1":"y"}]}]', type: 'l3' },
    ]);
    const link = 'l1.1_a3c153f05f4891513c17689074a943ff';
    assert.equal(
      files.get('b.l1'),
      `"0","1_2","1_x","id","Id","i_d","${md5('i_d')}","","-1","01","1_5","10"\n"a","b","${link}","5","6","8","","empty","neg","lead","dot",""\n"c","d","","","","","","","","","","ten"\n`,
    );
    assert.equal(files.get('b.l1_1_x'), `"data","JSON_parentId"\n"1","${link}"\n`);
    assert.equal(files.get('b.l4'), '"2","0","1","3"\n"two","zero","one",""\n"","","one2","three"\n');
    assert.match(files.get('b.l3_b')!, /^"0","1","JSON_parentId"\n"x","y","l3_[0-9a-f]{32}"\n$/);
    // definitions with the keys 0, 1 in order are a PHP list: saved as a JSON list
    assert.match(outStateText(new Map(), 1, state), /"l3\.b":\["scalar","scalar"\]/);
  });

  it('lets an injected integer-like key replace the same property in place (array_replace keeps the key)', async () => {
    const { files } = await legacy([
      { rows: '[{"id":1,"0":"a","u":"data"},{"id":2}]', type: 'c', injected: '{"u":"U","0":"zero"}' },
    ]);
    // the header repeats the injected names (md5 of the raw names: always empty), as GE's does
    assert.equal(
      files.get('b.c'),
      `"id","0","u","${md5('u')}","${md5('0')}"\n"1","zero","U","",""\n"2","zero","U","",""\n`,
    );
  });
});

describe('legacy parser: analysis', () => {
  it('ignores empty objects, so an object group appears where it was first non-empty', async () => {
    const rows = '[{"id":1,"o":{},"name":"a"},{"id":2,"o":{"x":1},"name":"b"}]';
    assert.equal((await legacy([{ rows }])).files.get('b.a'), '"id","name","o_x"\n"1","a",""\n"2","b","1"\n');
    assert.equal((await modern([{ rows }])).files.get('b.a'), '"id","o_x","name"\n"1","","a"\n"2","1","b"\n');
  });

  it('treats an object as empty when its first property is an empty object (php-utils isEmptyObject)', async () => {
    assert.equal((await legacy([{ rows: '[{"id":1,"o":{"e":{},"x":1}}]' }])).files.get('b.a'), '"id"\n"1"\n');
  });

  it('keeps list items when the list is null in other rows (no null/array quirk)', async () => {
    const rows = '[{"id":1,"tags":["a"]},{"id":2,"tags":null}]';
    assert.match((await legacy([{ rows }])).files.get('b.a_tags')!, /^"data","JSON_parentId"\n"a","a_[0-9a-f]{32}"\n$/);
    assert.match((await modern([{ rows }])).files.get('b.a_tags')!, /^"JSON_parentId"\n"a_[0-9a-f]{32}"\n$/);
  });

  it('upgrades scalars to lists and writes nested lists as JSON', async () => {
    const { files } = await legacy([{ rows: '[{"id":1,"t":"solo","n":[[1,2]]},{"id":2,"t":["p","q"]}]' }]);
    assert.match(
      files.get('b.a_t')!,
      /^"data","JSON_parentId"\n"solo","a_[0-9a-f]{32}"\n"p","a_[0-9a-f]{32}"\n"q","a_[0-9a-f]{32}"\n$/,
    );
    assert.match(files.get('b.a_n')!, /^"data","JSON_parentId"\n"\[1,2\]","a_[0-9a-f]{32}"\n$/);
  });

  it('warns like GE for each list inside a list, also for [[]] of a type the seeded structure knows', async () => {
    const run = await legacy([
      { rows: '[[1,2],[3]]', type: 'n' },
      { rows: '[[]]', type: 'e' },
      { rows: '[{"a":[[1],"x"],"b":{"c":[[]]}}]', type: 'o' },
    ]);
    const warnings = (logs: string) =>
      logs
        .split('\n')
        .filter((line) => line.includes('WARN'))
        .map((line) => line.replace(/^.*WARN +/, ''));
    assert.deepEqual(warnings(run.logs), [
      'Using legacy JSON parser, because it has been explicitly requested.',
      "Unsupported array nesting in 'n'! Converting to JSON string.",
      "Unsupported array nesting in 'n'! Converting to JSON string.",
      "Unsupported array nesting in 'o.a'! Converting to JSON string.",
      "Unsupported array nesting in 'o.b.c'! Converting to JSON string.",
    ]);
    assert.equal(run.files.has('b.e'), false);
    const seeded = await runOutput([{ batches: [{ rows: '[[]]', type: 't' }] }], {
      struct: '{"t":{"data":"scalar"}}',
      structVersion: 2,
    });
    assert.deepEqual(warnings(seeded.logs), [
      'Using legacy JSON parser, because it is in configuration state.',
      "Unsupported array nesting in 't'! Converting to JSON string.",
    ]);
    assert.equal(seeded.files.get('b.t'), '"data"\n"[]"\n');
  });

  it('adds a `data` column when scalar rows follow object rows of a type', async () => {
    assert.equal(
      (await legacy([{ rows: '[{"x":1}]' }, { rows: '[2]' }])).files.get('b.a'),
      '"x","data"\n"1",""\n"","2"\n',
    );
  });

  it('fails on incompatible types like GE', async () => {
    await assert.rejects(
      legacy([{ rows: '[{"x":1},{"x":{"y":1}}]' }]),
      /Error parsing response JSON: Unhandled type change from "scalar" to "object" in 'a\.x'/,
    );
    await assert.rejects(
      legacy([{ rows: '[1]' }, { rows: '[{"x":1}]' }]),
      /Error parsing response JSON: Data array in 'a' contains incompatible data types 'scalar' and 'object'!/,
    );
    // a type without any property has no definitions: GE's legacy parser fails while writing
    await assert.rejects(
      legacy([{ rows: '[{}]' }]),
      (e: Error) => e.name === 'ApplicationError' && /unknown definitions for 'a'/.test(e.message),
    );
  });

  it('writes nothing for empty batches of unknown types', async () => {
    const { files } = await legacy([{ rows: '[]' }, { rows: '[null]' }, { rows: '[0]' }]);
    assert.equal(files.size, 0);
  });

  it('queues records on disk like the new parser, writing CSVs only at the end', async () => {
    // pages larger than what the queue gathers in memory (256 KB) reach the file page by page;
    // a frame: 4 bytes of length and 1 of kind, then the V8-serialized batch
    const big = 'v'.repeat(300_000);
    const lines = [1, 2].map((id) =>
      'x'.repeat(
        5 +
          v8.serialize([
            'a',
            new Map(),
            [
              new Map<string, string | number>([
                ['id', id],
                ['s', big],
              ]),
            ],
          ]).length,
      ),
    );
    const sizes: number[] = [];
    let pages = 0;
    await legacy([{ rows: `[{"id":1,"s":"${big}"}]` }, { rows: `[{"id":2,"s":"${big}"}]` }], {
      afterPage: async (tmpDir) => {
        const [spool] = (await readdir(tmpDir)).filter((d) => d.startsWith('gex-spool-'));
        const expected = lines.slice(0, ++pages).join('').length;
        // the stream writes in the background: give it a moment, the run goes on meanwhile
        let size = 0;
        for (let i = 0; i < 200 && size < expected; i++) {
          // the file itself appears once the stream has opened it
          size = (await stat(path.join(tmpDir, spool, 'batches.bin')).catch(() => ({ size: 0 }))).size;
          if (size < expected) await new Promise((resolve) => setTimeout(resolve, 5));
        }
        sizes.push(size);
      },
    });
    assert.deepEqual(sizes, [lines[0].length, lines[0].length + lines[1].length]);
  });
});

describe('legacy parser: state structure', () => {
  it('saves the flat structure (children first, as analysed) with structVersion 2', async () => {
    const { state } = await legacy([{ rows: '[{"id":1,"tags":["x"],"o":{"k":1},"e":[]}]', type: 't' }]);
    assert.equal(
      outStateText(new Map(), 1500000000, state),
      '{"time":{"previousStart":1500000000},"json_parser.struct":{"t.tags":{"data":"scalar"},"t.o":{"k":"scalar"},' +
        '"t":{"id":"scalar","tags":"arrayOfscalar","o":"object","e":"NULL"}},"json_parser.structVersion":2}',
    );
  });

  it('writes a header-only table for a known type with an empty response, from a seeded structure', async () => {
    const struct = '{"users":{"id":"scalar","name":"scalar"},"users.tags":[]}';
    const run = await runOutput([{ batches: [{ rows: '[]', type: 'users' }] }], { struct, structVersion: 2 });
    assert.equal(run.files.get('b.users'), '"id","name"\n');
    assert.match(run.logs, /Using legacy JSON parser, because it is in configuration state\./);
    assert.equal(
      outStateText(new Map([['json_parser.struct', new Map()]]), 9, run.state),
      '{"json_parser.struct":{"users":{"id":"scalar","name":"scalar"},"users.tags":[]},"time":{"previousStart":9},"json_parser.structVersion":2}',
    );
  });

  it('keeps seeded columns and appends new ones', async () => {
    const struct = '{"users":{"id":"scalar","previous":"scalar"}}';
    const { files } = await runOutput([{ batches: [{ rows: '[{"id":1,"new":2}]', type: 'users' }] }], {
      struct,
      structVersion: 2,
    });
    assert.equal(files.get('b.users'), '"id","previous","new"\n"1","","2"\n');
  });

  it('refuses an invalid saved structure', async () => {
    await assert.rejects(
      runOutput([{ batches: [] }], { struct: '{"users":{"id":"text"}}', structVersion: 2 }),
      /'text' is not a valid data type/,
    );
  });
});
