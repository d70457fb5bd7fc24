import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../../src/common/errors.js';
import type { EmbeddedBackend } from '../../../src/store/embedded/embedded-backend.js';
import { localToken } from '../../../src/store/embedded/tokens.js';
import {
  MAX_METADATA_PER_OBJECT,
  MetadataInvalid,
  ProjectTables,
  type LoadOrigin,
  type MetadataItem,
} from '../../../src/store/tables/index.js';
import { storeBackends } from '../../support/store.js';

const csv = (rows: string[][]) =>
  rows.map((r) => r.map((v) => `"${v.replaceAll('"', '""')}"`).join(',') + '\n').join('');

/** An assertion that the error is a UserError of `code` whose message matches. */
const refusal = (code: string, pattern: RegExp) => (e: unknown) => {
  assert.ok(e instanceof UserError, `a UserError, not ${String(e)}`);
  assert.equal(e.gexCode, code, e.message);
  assert.match(e.message, pattern);
  return true;
};

/** provider:key=value of each item, in order. */
const pairs = (items: readonly MetadataItem[]) => items.map((m) => `${m.provider}:${m.key}=${m.value}`);

const ORIGIN: LoadOrigin = { componentId: 'ex-generic-v2', configurationId: 'shop', rowId: 'users' };

for (const factory of storeBackends()) {
  describe(`Storage metadata of buckets, tables and columns (${factory.name})`, function () {
    this.timeout(60_000);
    let backend: EmbeddedBackend;
    let dispose: () => Promise<void>;
    let dir: string;
    let tables: ProjectTables;
    let other: ProjectTables;
    let files = 0;
    let clock = 0;

    beforeEach(async () => {
      ({ backend, dispose } = await factory.open());
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-metadata-'));
      const now = () => new Date(Date.UTC(2025, 0, 1, 0, 0, clock++));
      tables = new ProjectTables(backend.db, (await localToken(backend.db, 'default')).projectId, now);
      other = new ProjectTables(backend.db, (await localToken(backend.db, 'other')).projectId, now);
    });
    afterEach(async () => {
      for (const project of [tables, other])
        for (const b of await project.listBuckets()) await project.deleteBucket(b.id);
      await dispose();
      await rm(dir, { recursive: true, force: true });
    });

    async function load(rows: string[][], manifest: Record<string, unknown>, origin?: LoadOrigin, into = tables) {
      const file = path.join(dir, `file${++files}.csv`);
      await writeFile(file, csv(rows));
      return into.load(file, manifest, origin);
    }
    const users = (manifest: Record<string, unknown> = {}, origin?: LoadOrigin) =>
      load(
        [
          ['id', 'name'],
          ['1', 'Ann'],
        ],
        { destination: 'in.c-shop.users', ...manifest },
        origin,
      );
    /** Every stored metadata row of the store, whatever its project. */
    const storedRows = async () =>
      Number((await backend.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM storage_metadata'))?.n);

    it("a run's load records Keboola's system metadata: createdBy on a new bucket and table, lastUpdatedBy on every load", async () => {
      await users({}, ORIGIN);
      const created = await tables.table('in.c-shop.users');
      assert.deepEqual(pairs(created.metadata), [
        'system:KBC.createdBy.component.id=ex-generic-v2',
        'system:KBC.createdBy.configuration.id=shop',
        'system:KBC.createdBy.configurationRow.id=users',
        'system:KBC.lastUpdatedBy.component.id=ex-generic-v2',
        'system:KBC.lastUpdatedBy.configuration.id=shop',
        'system:KBC.lastUpdatedBy.configurationRow.id=users',
      ]);
      assert.deepEqual(pairs((await tables.bucket('in.c-shop')).metadata), [
        'system:KBC.createdBy.component.id=ex-generic-v2',
        'system:KBC.createdBy.configuration.id=shop',
        'system:KBC.createdBy.configurationRow.id=users',
      ]);
      for (const m of created.metadata) {
        assert.match(m.id, /^\d+$/);
        assert.match(m.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/);
      }
      // another row of another configuration loads into the table: only lastUpdatedBy changes, in place
      await users({ incremental: true }, { componentId: 'ex-generic-v2', configurationId: 'crm', rowId: null });
      const updated = await tables.table('in.c-shop.users');
      assert.deepEqual(pairs(updated.metadata), [
        'system:KBC.createdBy.component.id=ex-generic-v2',
        'system:KBC.createdBy.configuration.id=shop',
        'system:KBC.createdBy.configurationRow.id=users',
        'system:KBC.lastUpdatedBy.component.id=ex-generic-v2',
        'system:KBC.lastUpdatedBy.configuration.id=crm',
        // a configuration without rows has no row id: the previous row's item stays, as Keboola leaves it
        'system:KBC.lastUpdatedBy.configurationRow.id=users',
      ]);
      assert.deepEqual(
        updated.metadata.map((m) => m.id),
        created.metadata.map((m) => m.id),
        'an item set again keeps its id',
      );
      assert.ok(updated.metadata[4].timestamp > created.metadata[4].timestamp, 'and gets a new timestamp');
      // a table the load creates in an existing bucket: the bucket's metadata is left alone
      await load([['id'], ['9']], { destination: 'in.c-shop.orders' }, ORIGIN);
      assert.equal((await tables.bucket('in.c-shop')).metadata.length, 3);
      // without an origin (gex tables import): no system metadata
      await load([['id'], ['9']], { destination: 'in.c-plain.t' });
      assert.deepEqual((await tables.table('in.c-plain.t')).metadata, []);
      assert.deepEqual((await tables.bucket('in.c-plain')).metadata, []);
    });

    it("the manifest's metadata and column_metadata are the loading component's; without a component the user's", async () => {
      await users(
        {
          metadata: [
            { key: 'KBC.description', value: 'Our users' },
            { key: 'rank', value: 3 },
          ],
          table_metadata: { 'KBC.name': 'Users' },
          column_metadata: {
            name: [{ key: 'KBC.datatype.basetype', value: 'STRING' }],
            id: [
              { key: 'KBC.datatype.basetype', value: 'INTEGER' },
              { key: 'KBC.datatype.nullable', value: false },
            ],
          },
        },
        ORIGIN,
      );
      const detail = await tables.table('in.c-shop.users');
      assert.deepEqual(pairs(detail.metadata).slice(6), [
        'ex-generic-v2:KBC.description=Our users',
        'ex-generic-v2:rank=3',
        'ex-generic-v2:KBC.name=Users',
      ]);
      // by column, in the table's column order
      assert.deepEqual(
        [...detail.columnMetadata!].map(([c, items]) => [c, pairs(items)]),
        [
          ['id', ['ex-generic-v2:KBC.datatype.basetype=INTEGER', 'ex-generic-v2:KBC.datatype.nullable=']],
          ['name', ['ex-generic-v2:KBC.datatype.basetype=STRING']],
        ],
      );
      assert.deepEqual(pairs(await tables.metadata({ columnId: 'in.c-shop.users.name' })), [
        'ex-generic-v2:KBC.datatype.basetype=STRING',
      ]);
      // a list reads the tables' own metadata; their columns' only when asked
      const [listed] = await tables.listTables();
      assert.equal(listed.metadata.length, 9);
      assert.equal(listed.columnMetadata, null);
      assert.equal((await tables.listTables('in.c-shop', { columnMetadata: true }))[0].columnMetadata!.size, 2);

      await load([['id'], ['1']], { destination: 'in.c-plain.t', metadata: [{ key: 'k', value: 'v' }] });
      assert.deepEqual(pairs((await tables.table('in.c-plain.t')).metadata), ['user:k=v']);
    });

    it('column_metadata naming a column the table lacks refuses the load: rows, columns and metadata stay as they were', async () => {
      await users({ metadata: [{ key: 'k', value: 'before' }] }, ORIGIN);
      const before = await tables.table('in.c-shop.users');
      await assert.rejects(
        load(
          [
            ['id', 'name', 'city'],
            ['2', 'Bob', 'Oslo'],
          ],
          {
            destination: 'in.c-shop.users',
            metadata: [{ key: 'k', value: 'after' }],
            column_metadata: { town: [{ key: 'x', value: 'y' }] },
          },
          ORIGIN,
        ),
        refusal(
          'GEX_TABLE_LOAD_REFUSED',
          /column_metadata names the column town, which table in\.c-shop\.users does not have.*the table is unchanged/,
        ),
      );
      const after = await tables.table('in.c-shop.users');
      assert.deepEqual({ ...after, dataSizeBytes: 0 }, { ...before, dataSizeBytes: 0 });
      assert.deepEqual((await tables.preview('in.c-shop.users')).rows, [['1', 'Ann']]);
      // a table the refused load would have created does not exist, nor its bucket
      await assert.rejects(
        load(
          [['id'], ['1']],
          { destination: 'in.c-new.t', column_metadata: { nope: [{ key: 'x', value: 'y' }] } },
          ORIGIN,
        ),
        refusal('GEX_TABLE_LOAD_REFUSED', /column nope/),
      );
      assert.deepEqual(
        (await tables.listBuckets()).map((b) => b.id),
        ['in.c-shop'],
      );
      // a column the same load adds may carry metadata
      await load(
        [
          ['id', 'city'],
          ['3', 'Rome'],
        ],
        { destination: 'in.c-shop.users', incremental: true, column_metadata: { city: [{ key: 'x', value: 'y' }] } },
        ORIGIN,
      );
      assert.deepEqual(pairs((await tables.table('in.c-shop.users')).columnMetadata!.get('city')!), [
        'ex-generic-v2:x=y',
      ]);
    });

    it("sets by provider and key: a known pair keeps its id and place, another provider's same key is another item", async () => {
      await users();
      const first = await tables.setMetadata({ tableId: 'in.c-shop.users' }, 'keboola.ex-db', [
        { key: 'a', value: '1' },
        { key: 'b', value: '2' },
      ]);
      const second = await tables.setMetadata({ tableId: 'in.c-shop.users' }, 'user', [{ key: 'a', value: 'mine' }]);
      const third = await tables.setMetadata({ tableId: 'in.c-shop.users' }, 'keboola.ex-db', [
        { key: 'a', value: '3' },
      ]);
      assert.deepEqual(pairs(first), ['keboola.ex-db:a=1', 'keboola.ex-db:b=2']);
      assert.deepEqual(pairs(second), ['keboola.ex-db:a=1', 'keboola.ex-db:b=2', 'user:a=mine']);
      assert.deepEqual(pairs(third), ['keboola.ex-db:a=3', 'keboola.ex-db:b=2', 'user:a=mine']);
      assert.equal(third[0].id, first[0].id);
      assert.ok(Number(second[2].id) > Number(first[1].id), 'ids grow in the order items are first set');

      // the table call: its own items and its columns', both in one transaction
      const set = await tables.setTableMetadata('in.c-shop.users', {
        provider: 'user',
        metadata: [{ key: 'c', value: '4' }],
        // Keboola's newer form: keyed by position, the column in each item
        columnsMetadata: { 0: [{ columnName: 'name', key: 'k', value: 'v' }], id: [{ key: 'k', value: 'w' }] },
      });
      assert.deepEqual(pairs(set.metadata).at(-1), 'user:c=4');
      assert.deepEqual([...set.columns.keys()], ['name', 'id']);
      await assert.rejects(
        tables.setTableMetadata('in.c-shop.users', {
          provider: 'user',
          metadata: [{ key: 'd', value: '5' }],
          columnsMetadata: { nope: [{ key: 'k', value: 'v' }] },
        }),
        refusal('GEX_COLUMN_NOT_FOUND', /Column nope not found in table in\.c-shop\.users \(its columns: id, name\)/),
      );
      assert.ok(!pairs((await tables.table('in.c-shop.users')).metadata).includes('user:d=5'), 'all or nothing');
      await assert.rejects(
        tables.setTableMetadata('in.c-shop.users', { provider: 'user' }),
        refusal('GEX_METADATA_INVALID', /The metadata parameter must be an array/),
      );

      // deleted by id, only from its own object
      const [a] = third;
      await assert.rejects(
        tables.deleteMetadata({ bucketId: 'in.c-shop' }, Number(a.id)),
        refusal(
          'GEX_METADATA_NOT_FOUND',
          /The supplied metadata ID was not found: the bucket in\.c-shop has no metadata item/,
        ),
      );
      await assert.rejects(
        tables.deleteMetadata({ columnId: 'in.c-shop.users.name' }, Number(a.id)),
        refusal('GEX_METADATA_NOT_FOUND', /column name of table in\.c-shop\.users/),
      );
      await tables.deleteMetadata({ tableId: 'in.c-shop.users' }, Number(a.id));
      assert.ok(!(await tables.metadata({ tableId: 'in.c-shop.users' })).some((m) => m.id === a.id));
    });

    it("another project's objects do not exist for a project; its items cannot be read, set or deleted", async () => {
      await users();
      const [item] = await tables.setMetadata({ bucketId: 'in.c-shop' }, 'user', [{ key: 'secret', value: 's' }]);
      await load([['id'], ['1']], { destination: 'in.c-shop.users' }, undefined, other);
      await assert.rejects(
        other.deleteMetadata({ bucketId: 'in.c-shop' }, Number(item.id)),
        refusal('GEX_METADATA_NOT_FOUND', /not found/),
      );
      assert.deepEqual(await other.metadata({ bucketId: 'in.c-shop' }), []);
      await assert.rejects(
        other.metadata({ tableId: 'in.c-none.t' }),
        refusal('GEX_TABLE_NOT_FOUND', /does not exist/),
      );
      await assert.rejects(
        other.metadata({ bucketId: 'in.c-none' }),
        refusal('GEX_BUCKET_NOT_FOUND', /does not exist/),
      );
      assert.deepEqual(pairs(await tables.metadata({ bucketId: 'in.c-shop' })), ['user:secret=s']);
    });

    it("deleting a table deletes its metadata and its columns'; deleting a bucket all of its own and its tables'", async () => {
      await users(
        { metadata: [{ key: 'k', value: 'v' }], column_metadata: { id: [{ key: 'k', value: 'v' }] } },
        ORIGIN,
      );
      await load([['id'], ['1']], { destination: 'in.c-shop.orders', metadata: [{ key: 'k', value: 'v' }] }, ORIGIN);
      await load([['id'], ['1']], { destination: 'in.c-keep.t', metadata: [{ key: 'k', value: 'v' }] }, ORIGIN);
      const all = await storedRows();
      await tables.deleteTable('in.c-shop.users');
      assert.equal(await storedRows(), all - 8, "the table's 6 system items, its item and its column's");
      // a table of the same name starts without metadata
      await users();
      assert.deepEqual((await tables.table('in.c-shop.users')).metadata, []);
      await tables.deleteBucket('in.c-shop', { onlyEmpty: false });
      assert.equal(
        await storedRows(),
        3 + 6 + 1,
        "only in.c-keep's: its bucket's createdBy, its table's createdBy and lastUpdatedBy, its item",
      );
      await assert.rejects(
        tables.metadata({ bucketId: 'in.c-shop' }),
        refusal('GEX_BUCKET_NOT_FOUND', /does not exist/),
      );
    });

    it('bounds what one object holds and one write sets; refused writes change nothing and name the object', async () => {
      await users();
      const many = (n: number, prefix = 'k') =>
        Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i}`, value: 'v' }));
      await tables.setMetadata({ columnId: 'in.c-shop.users.id' }, 'user', many(MAX_METADATA_PER_OBJECT));
      await assert.rejects(
        tables.setMetadata({ columnId: 'in.c-shop.users.id' }, 'other', many(1)),
        refusal(
          'GEX_METADATA_INVALID',
          /column id of table in\.c-shop\.users would hold 1001 metadata items, more than the 1000.*Nothing was changed/,
        ),
      );
      assert.equal((await tables.metadata({ columnId: 'in.c-shop.users.id' })).length, MAX_METADATA_PER_OBJECT);
      // setting known keys again does not grow it
      await tables.setMetadata({ columnId: 'in.c-shop.users.id' }, 'user', many(10));
      await assert.rejects(
        tables.setMetadata({ tableId: 'in.c-shop.users' }, 'user', many(10_001)),
        refusal('GEX_METADATA_INVALID', /metadata has 10001 items, more than the 10000 one write may set/),
      );
      await assert.rejects(
        users({ metadata: many(MAX_METADATA_PER_OBJECT + 1) }, ORIGIN),
        refusal('GEX_METADATA_INVALID', /table in\.c-shop\.users would hold/),
      );
      assert.deepEqual((await tables.preview('in.c-shop.users')).rows, [['1', 'Ann']]);
    });

    it('refuses hostile keys, values and providers, naming the field; odd but valid names and values are kept exactly', async () => {
      await users();
      const set = (provider: unknown, metadata: unknown) =>
        tables.setMetadata({ bucketId: 'in.c-shop' }, provider, metadata);
      const invalid = (problem: string, pattern: RegExp) => (e: unknown) => {
        assert.ok(e instanceof MetadataInvalid, String(e));
        assert.equal(e.problem, problem);
        assert.match(e.message, pattern);
        return true;
      };
      for (const [key, shown] of [
        ['%invalidKey', /%invalidKey/],
        ['a b', /"a b"/],
        ['k\u0000', /\\u0000/],
        ['k\u202e', /\\u202e/],
        ['k'.repeat(256), /k{100}…/],
      ] as const)
        await assert.rejects(
          set('user', [{ key, value: 'v' }]),
          invalid('invalidKey', new RegExp(`Invalid Metadata Key \\(metadata\\[0\\]\\[key\\]\\): .*${shown.source}`)),
        );
      await assert.rejects(set('user', [{ key: 7, value: 'v' }]), invalid('invalidKey', /a number, not a text/));
      await assert.rejects(
        set('user', [{ key: 'k', value: 'x'.repeat(65_536) }]),
        invalid('invalidValue', /metadata\[0\]\[value\] is 65536 bytes long/),
      );
      // bytes, not characters: 21,846 three-byte characters are 65,538 bytes
      await assert.rejects(
        set('user', [{ key: 'k', value: '€'.repeat(21_846) }]),
        invalid('invalidValue', /65538 bytes/),
      );
      await assert.rejects(set('user', [{ key: 'k', value: '\u0000' }]), invalid('invalidValue', /NUL/));
      await assert.rejects(
        set('user', [{ key: 'k', value: ['a'] }]),
        invalid('invalidStructure', /metadata\[0\]\[value\] must be a text/),
      );
      await assert.rejects(set('user', { key: 'k', value: 'v' }), invalid('invalidStructure', /Invalid structure/));
      await assert.rejects(
        set('user', 'not an array'),
        invalid('invalidParameter', /The metadata parameter must be an array/),
      );
      await assert.rejects(
        set(undefined, [{ key: 'k', value: 'v' }]),
        invalid('invalidProvider', /^Provider is required\.$/),
      );
      await assert.rejects(
        set('%invalidCharacter$', [{ key: 'k', value: 'v' }]),
        invalid('invalidProvider', /^Invalid metadata provider "%invalidCharacter\$"/),
      );
      await assert.rejects(set('p'.repeat(256), [{ key: 'k', value: 'v' }]), invalid('invalidProvider', /1–255/));
      assert.deepEqual(await tables.metadata({ bucketId: 'in.c-shop' }), [], 'nothing was stored');

      const odd = ['', '"; DROP TABLE storage_metadata; --', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ✓\n\ttabs', 'x'.repeat(65_535)];
      const stored = await set(
        'storage',
        odd.map((value, i) => ({ key: `KBC.odd-${i}:x_y`, value })),
      );
      assert.deepEqual(
        stored.map((m) => m.value),
        odd,
      );
      // a component id that cannot be a provider refuses the load that would set its metadata, before anything changes
      await assert.rejects(
        users(
          { metadata: [{ key: 'k', value: 'v' }] },
          { componentId: 'my component', configurationId: 'c', rowId: null },
        ),
        refusal(
          'GEX_METADATA_INVALID',
          /the component id as the metadata's provider: Invalid metadata provider "my component"/,
        ),
      );
    });

    it('a column id names the table whose name is the shortest that has the column (table names may hold dots)', async () => {
      await load([['a.b', 'c']], { destination: 'in.c-d.t' });
      await load([['b', 'x']], { destination: 'in.c-d.t.a' });
      await tables.setMetadata({ columnId: 'in.c-d.t.a.b' }, 'user', [{ key: 'k', value: 'on t' }]);
      assert.deepEqual(pairs((await tables.table('in.c-d.t')).columnMetadata!.get('a.b')!), ['user:k=on t']);
      await tables.setMetadata({ columnId: 'in.c-d.t.a.x' }, 'user', [{ key: 'k', value: 'on t.a' }]);
      assert.deepEqual(pairs((await tables.table('in.c-d.t.a')).columnMetadata!.get('x')!), ['user:k=on t.a']);
      await assert.rejects(
        tables.metadata({ columnId: 'in.c-d.t.nope' }),
        refusal('GEX_COLUMN_NOT_FOUND', /Column nope not found in table in\.c-d\.t/),
      );
      await assert.rejects(
        tables.metadata({ columnId: 'in.c-d.none' }),
        refusal('GEX_TABLE_NOT_FOUND', /no table of it exists/),
      );
      await assert.rejects(
        tables.metadata({ columnId: 'nonsense' }),
        refusal('GEX_TABLE_REQUEST_INVALID', /not a table id/),
      );
    });
  });
}
