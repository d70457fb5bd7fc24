import assert from 'node:assert/strict';
import { UserError } from '../../src/common/errors.js';
import { fromPlain, type JsonObject } from '../../src/json/index.js';
import {
  checkHeader,
  checkSources,
  effectiveLoad,
  parseOutputMapping,
  planTables,
  type OutputMappingEntry,
} from '../../src/runner/output-mapping-config.js';
import { mergeRowConfiguration } from '../../src/runner/effective-configuration.js';
import { parseLoadManifest } from '../../src/store/tables/index.js';

const storage = (tables: unknown): JsonObject => fromPlain({ output: { tables } }) as JsonObject;
const parse = (tables: unknown): OutputMappingEntry[] => parseOutputMapping(storage(tables), 'Row "r1"');
const refused = (tables: unknown, message: RegExp) =>
  assert.throws(
    () => parse(tables),
    (e: unknown) => e instanceof UserError && e.gexCode === 'GEX_OUTPUT_MAPPING_INVALID' && message.test(e.message),
  );
const fallback = () => 'in.c-ex-generic-v2-42.users';

describe('output mapping of a configuration (storage.output.tables)', () => {
  it('no storage.output: no entries, and a file loads exactly as before (manifest, else default bucket)', () => {
    assert.deepEqual(parseOutputMapping(new Map(), 'Row "r1"'), []);
    assert.deepEqual(parse(null), []);
    assert.deepEqual(effectiveLoad({ destination: 'in.c-a.t', incremental: true }, undefined, fallback), {
      manifest: { destination: 'in.c-a.t', incremental: true },
      reason: 'manifest',
      headerMustBe: null,
    });
    assert.deepEqual(effectiveLoad({}, undefined, fallback), {
      manifest: { destination: 'in.c-ex-generic-v2-42.users' },
      reason: 'default bucket',
      headerMustBe: null,
    });
  });

  it("the mapping's keys replace the manifest's key by key; the manifest's other keys stay", () => {
    const [entry] = parse([
      { source: 'users', destination: 'out.c-crm.people', incremental: true, primary_key: ['id'] },
    ]);
    const load = effectiveLoad(
      { destination: 'in.c-shop.users', incremental: false, primary_key: ['name'], delimiter: ';' },
      entry,
      fallback,
    );
    assert.equal(load.reason, 'mapping');
    assert.deepEqual(load.manifest, {
      destination: 'out.c-crm.people',
      incremental: true,
      primary_key: ['id'],
      delimiter: ';',
    });
  });

  it('destination: mapping, else manifest, else default bucket', () => {
    const [noDestination] = parse([{ source: 'users', incremental: true }]);
    const fromManifest = effectiveLoad({ destination: 'in.c-shop.users' }, noDestination, fallback);
    assert.equal(fromManifest.reason, 'manifest');
    assert.equal((fromManifest.manifest as { destination: string }).destination, 'in.c-shop.users');
    const fromDefault = effectiveLoad({}, noDestination, fallback);
    assert.equal(fromDefault.reason, 'default bucket');
    assert.deepEqual(fromDefault.manifest, { incremental: true, destination: 'in.c-ex-generic-v2-42.users' });
  });

  it("delete_where (the list form) becomes the loader's column/values/operator and replaces the manifest's delete", () => {
    const [entry] = parse([
      {
        source: 'users',
        delete_where: [{ where_filters: [{ column: 'status', operator: 'ne', values_from_set: ['a', 'b'] }] }],
      },
    ]);
    const load = effectiveLoad({ delete_where_column: 'x', delete_where_values: ['1'] }, entry, fallback);
    const parsed = parseLoadManifest(load.manifest, 'users');
    assert.deepEqual(parsed.deleteWhere, { column: 'status', values: ['a', 'b'], operator: 'ne' });
    // the deprecated keys in a mapping: the manifest's operator does not leak in
    const [legacy] = parse([{ source: 'users', delete_where_column: 'c', delete_where_values: ['v'] }]);
    const legacyLoad = effectiveLoad({ delete_where_operator: 'ne' }, legacy, fallback);
    assert.deepEqual(parseLoadManifest(legacyLoad.manifest, 'users').deleteWhere, {
      column: 'c',
      values: ['v'],
      operator: 'eq',
    });
  });

  it('columns over a file with a header: the header must be them (the file is not re-read headless)', () => {
    const [entry] = parse([{ source: 'users', columns: ['id', 'name'] }]);
    const load = effectiveLoad({}, entry, fallback);
    assert.deepEqual(load.headerMustBe, ['id', 'name']);
    assert.equal((load.manifest as Record<string, unknown>).columns, undefined);
    // a headless file (its manifest has columns): the mapping's columns replace them
    const headless = effectiveLoad({ columns: ['a', 'b'] }, entry, fallback);
    assert.equal(headless.headerMustBe, null);
    assert.deepEqual((headless.manifest as { columns: string[] }).columns, ['id', 'name']);
    checkHeader('users', ['id', 'name'], ['id', 'name'], 'storage.output.tables[0]');
    assert.throws(
      () => checkHeader('users', ['id', 'mail'], ['id', 'name'], 'storage.output.tables[0]'),
      (e: unknown) =>
        e instanceof UserError && /out\/tables\/users: its header \["id","mail"\] is not the columns/.test(e.message),
    );
  });

  it('a source that matches no file fails with Keboola\'s "Table sources not found" naming it', () => {
    const entries = parse([{ source: 'users' }, { source: 'orders.csv' }]);
    checkSources(entries, ['users', 'orders.csv', 'other'], 'Row "r1"');
    assert.throws(
      () => checkSources(entries, ['users'], 'Row "r1"'),
      (e: unknown) =>
        e instanceof UserError &&
        e.gexCode === 'GEX_OUTPUT_MAPPING_INVALID' &&
        /^Row "r1": Table sources not found: "orders\.csv"\./.test(e.message) &&
        /no table of the row was loaded/.test(e.message),
    );
  });

  it('refuses hostile sources: a path, "..", NUL, a manifest, twice the same, none', () => {
    refused([{ source: '../etc/passwd' }], /storage\.output\.tables\[0\]\.source/);
    refused([{ source: 'a/b' }], /storage\.output\.tables\[0\]\.source/);
    refused([{ source: '..' }], /storage\.output\.tables\[0\]\.source/);
    refused([{ source: 'a\u0000b' }], /storage\.output\.tables\[0\]\.source/);
    refused([{ source: 'users.manifest' }], /ends in \.manifest/);
    refused(
      [{ source: 'users' }, { source: 'users' }],
      /\[1\]\.source users is mapped already by storage\.output\.tables\[0\]/,
    );
    refused([{ destination: 'in.c-a.t' }], /\[0\]\.source must be the name of a file/);
    refused([{ source: 7 }], /\[0\]\.source must be the name/);
    refused({ source: 'users' }, /storage\.output\.tables must be a list/);
    refused(['users'], /\[0\] must be an object/);
  });

  it("refuses destinations outside the project's in/out buckets", () => {
    refused([{ source: 'u', destination: 'sys.c-internal.t' }], /sys\.c-internal\.t is not a bucket of this project/);
    refused([{ source: 'u', destination: '123.in.c-other.t' }], /123\.in\.c-other\.t is not a bucket of this project/);
    refused([{ source: 'u', destination: 'users' }], /is not a table id of the form in\.c-<bucket>\.<table>/);
    refused([{ source: 'u', destination: 'in.c-a' }], /is not a table id/);
    refused([{ source: 'u', destination: 'in.c-a.t\u202e' }], /control or invisible character/);
    refused([{ source: 'u', destination: 42 }], /is not a table id/);
  });

  it('refuses bad values, unknown keys and what gex cannot do, naming the key', () => {
    refused([{ source: 'u', incremental: 'yes' }], /storage\.output\.tables\[0\]: incremental must be true or false/);
    refused([{ source: 'u', primary_key: 'id' }], /\[0\]: primary_key must be a list of strings/);
    refused([{ source: 'u', delete_where_operator: 'gt', delete_where_column: 'c' }], /delete_where_operator/);
    refused([{ source: 'u', write_always: true }], /\[0\]\.write_always is not supported/);
    refused([{ source: 'u', bogus: 1 }], /\[0\] has the unknown key bogus/);
    refused(
      [{ source: 'u', delete_where: [{ where_filters: [{ column: 'c', values_from_workspace: {} }] }] }],
      /\[0\]\.delete_where supports one entry/,
    );
    refused([{ source: 'u', delete_where: [{ changed_since: '-1 day', where_filters: [] }] }], /changed_since/);
    // empty metadata sets nothing; write_always false asks for nothing
    assert.equal(parse([{ source: 'u', metadata: [], column_metadata: {}, write_always: false }]).length, 1);
  });

  it('takes metadata, column_metadata and table_metadata (Keboola keeps them), checked as a load checks them', () => {
    const [entry] = parse([
      {
        source: 'u',
        metadata: [{ key: 'KBC.description', value: 'Users' }],
        column_metadata: { id: [{ key: 'KBC.datatype.basetype', value: 'INTEGER' }] },
        table_metadata: { 'KBC.name': 'users' },
      },
    ]);
    assert.deepEqual(entry.keys.metadata, [{ key: 'KBC.description', value: 'Users' }]);
    const parsed = parseLoadManifest({ destination: 'in.c-a.u', ...entry.keys }, 'u');
    assert.deepEqual(parsed.metadata, [
      { key: 'KBC.description', value: 'Users' },
      { key: 'KBC.name', value: 'users' },
    ]);
    assert.deepEqual(parsed.columnMetadata, [
      { column: 'id', entries: [{ key: 'KBC.datatype.basetype', value: 'INTEGER' }] },
    ]);
    // every refusal names the row, the entry and the field
    refused(
      [{ source: 'u', metadata: [{ key: '%bad', value: 'v' }] }],
      /Row "r1": storage\.output\.tables\[0\]: Invalid Metadata Key \(metadata\[0\]\[key\]\)/,
    );
    refused([{ source: 'u', metadata: [{ key: 'k'.repeat(256), value: 'v' }] }], /metadata\[0\]\[key\].*1–255/);
    refused([{ source: 'u', metadata: [{ key: '', value: 'v' }] }], /metadata\[0\]\[key\]\): it is empty/);
    refused([{ source: 'u', metadata: [{ value: 'v' }] }], /Invalid structure.*metadata\[0\] is not one/);
    refused([{ source: 'u', metadata: [{ key: 'k', value: { a: 1 } }] }], /metadata\[0\]\[value\] must be a text/);
    refused(
      [{ source: 'u', metadata: [{ key: 'k', value: 'x'.repeat(65_536) }] }],
      /metadata\[0\]\[value\] is 65536 bytes long/,
    );
    refused([{ source: 'u', metadata: [{ key: 'k', value: 'a\u0000b' }] }], /metadata\[0\]\[value\] contains a NUL/);
    refused(
      [{ source: 'u', metadata: [{ key: 'k', value: 'a\ud800' }] }],
      /metadata\[0\]\[value\] is not valid Unicode/,
    );
    refused([{ source: 'u', metadata: 'k=v' }], /The metadata parameter must be an array/);
    refused([{ source: 'u', column_metadata: { id: 'x' } }], /column_metadata\[id\] parameter must be an array/);
    refused([{ source: 'u', column_metadata: ['x'] }], /column_metadata\[0\] parameter must be an array/);
    refused([{ source: 'u', table_metadata: 'x' }], /table_metadata must be an object/);
    refused(
      [{ source: 'u', metadata: Array.from({ length: 10_001 }, (_, i) => ({ key: `k${i}`, value: '' })) }],
      /metadata has 10001 items, more than the 10000/,
    );
    // numbers and booleans are stored as PHP casts them; a key given twice keeps its first place, the last value
    const [cast] = parse([
      {
        source: 'u',
        metadata: [
          { key: 'a', value: 1 },
          { key: 'b', value: true },
          { key: 'a', value: 2.5 },
        ],
      },
    ]);
    assert.deepEqual(parseLoadManifest({ destination: 'in.c-a.u', ...cast.keys }, 'u').metadata, [
      { key: 'a', value: '2.5' },
      { key: 'b', value: '1' },
    ]);
  });

  it("merges the mapping's metadata into the manifest's item by item, as Keboola does", () => {
    const [entry] = parse([
      {
        source: 'u',
        metadata: [
          { key: 'b', value: 'mapping' },
          { key: 'c', value: 'mapping' },
        ],
        // as JSON gives it: "__proto__" an own key (an object literal would set the prototype)
        column_metadata: JSON.parse(
          '{"id": [{"key": "x", "value": "mapping"}], "__proto__": [{"key": "y", "value": "odd"}]}',
        ),
      },
    ]);
    const { manifest } = effectiveLoad(
      {
        destination: 'in.c-a.u',
        metadata: [
          { key: 'a', value: 'manifest' },
          { key: 'b', value: 'manifest' },
        ],
        column_metadata: { id: [{ key: 'w', value: 'manifest' }], name: [{ key: 'z', value: 'manifest' }] },
      },
      entry,
      fallback,
    );
    const parsed = parseLoadManifest(manifest, 'u');
    assert.deepEqual(parsed.metadata, [
      { key: 'a', value: 'manifest' },
      { key: 'b', value: 'mapping' },
      { key: 'c', value: 'mapping' },
    ]);
    assert.deepEqual(
      parsed.columnMetadata.map((c) => [c.column, c.entries.map((e) => `${e.key}=${e.value}`)]),
      [
        ['id', ['w=manifest', 'x=mapping']],
        ['name', ['z=manifest']],
        // a column named __proto__ stays a column
        ['__proto__', ['y=odd']],
      ],
    );
  });

  it("root's output mapping merged under a row's, index by index, like every other list", () => {
    const root = fromPlain({
      storage: { output: { tables: [{ source: 'users', destination: 'in.c-a.users', incremental: true }] } },
    });
    const row = fromPlain({ storage: { output: { tables: [{ destination: 'in.c-b.users' }] } } });
    const merged = mergeRowConfiguration(root, row) as JsonObject;
    const [entry] = parseOutputMapping(merged.get('storage') as JsonObject, 'Row "r1"');
    assert.deepEqual(
      { source: entry.source, destination: entry.destination, incremental: entry.keys.incremental },
      { source: 'users', destination: 'in.c-b.users', incremental: true },
    );
  });

  it("the check view: each table's destination and why; an input table an earlier row's mapping writes", () => {
    const plans = planTables(
      [
        { label: 'row 1 of 2: a', unit: 'Row "a"', storage: storage([{ source: 'users', destination: 'in.c-crm.u' }]) },
        {
          label: 'row 2 of 2: b',
          unit: 'Row "b"',
          storage: fromPlain({
            input: { tables: [{ source: 'in.c-crm.u' }, { source: 'in.c-x.y' }] },
            output: { tables: [{ source: 'x' }] },
          }) as JsonObject,
        },
        { label: 'row 3', unit: 'Row "c"', storage: storage([{ source: '../x' }]) },
      ],
      'in.c-ex-generic-v2-42',
    );
    assert.deepEqual(plans[0], {
      lines: [
        'table users → in.c-crm.u (output mapping storage.output.tables[0])',
        'other tables → manifest or default bucket in.c-ex-generic-v2-42, decided after extraction',
      ],
    });
    assert.deepEqual(plans[1], {
      lines: [
        'input table in.c-crm.u ← written by the output mapping of row 1 of 2: a',
        'input table in.c-x.y',
        'table x → manifest or default bucket in.c-ex-generic-v2-42, decided after extraction (output mapping storage.output.tables[0] sets no destination)',
        'other tables → manifest or default bucket in.c-ex-generic-v2-42, decided after extraction',
      ],
    });
    assert.ok('error' in plans[2] && /Row "c": storage\.output\.tables\[0\]\.source/.test(plans[2].error.message));
  });
  it('the check view names the bucket the configuration decides: outputBucket (or config.id), else the default bucket', () => {
    const empty = storage([]);
    const lines = (outputBuckets: Array<string | null> | undefined) => {
      const [plan] = planTables(
        [{ label: 'configuration', unit: 'The configuration', storage: empty, outputBuckets }],
        'in.c-ex-generic-v2-42',
      );
      assert.ok('lines' in plan);
      return plan.lines;
    };
    assert.deepEqual(lines(['shop']), ["tables → in.c-shop.<table> (the manifests' destination, from outputBucket)"]);
    assert.deepEqual(lines(['ex-api-generic-5']), [
      "tables → in.c-ex-api-generic-5.<table> (the manifests' destination, from outputBucket or config.id)",
    ]);
    assert.deepEqual(lines([null]), [
      'tables → default bucket in.c-ex-generic-v2-42 (no outputBucket: the manifests name no destination)',
    ]);
    assert.deepEqual(lines(['a', null, 'a']), [
      "tables → in.c-a.<table> (the manifests' destination, from outputBucket); the default bucket in.c-ex-generic-v2-42 for the iterations without one",
    ]);
    // parameters not valid enough to tell: as before, decided after extraction
    assert.deepEqual(lines(undefined), [
      'tables → manifest or default bucket in.c-ex-generic-v2-42, decided after extraction',
    ]);
  });
});
