import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../../src/common/errors.js';
import type { EmbeddedBackend } from '../../../src/store/embedded/embedded-backend.js';
import { localToken } from '../../../src/store/embedded/tokens.js';
import {
  EXPORT_BATCH_ROWS,
  parseChangedSince,
  ProjectTables,
  type TableQuery,
} from '../../../src/store/tables/index.js';
import { fitPostgresIdentifier } from '../../../src/store/tables/physical-names.js';
import { storeBackends } from '../../support/store.js';

const csv = (rows: string[][]) =>
  rows.map((r) => r.map((v) => `"${v.replaceAll('"', '""')}"`).join(',') + '\n').join('');

const userError = (pattern: RegExp) => (e: unknown) => {
  assert.ok(e instanceof UserError, `a UserError, not ${String(e)}`);
  assert.match(e.message, pattern);
  return true;
};

for (const factory of storeBackends()) {
  describe(`project Storage tables (${factory.name})`, function () {
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
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tables-'));
      const now = () => new Date(Date.UTC(2025, 0, 1, 0, 0, clock++));
      tables = new ProjectTables(backend.db, (await localToken(backend.db, 'default')).projectId, now);
      other = new ProjectTables(backend.db, (await localToken(backend.db, 'other')).projectId, now);
    });
    afterEach(async () => {
      // bucket schemas on PostgreSQL live beside the store's schema: remove them with the store
      for (const project of [tables, other])
        for (const b of await project.listBuckets()) await project.deleteBucket(b.id);
      await dispose();
      await rm(dir, { recursive: true, force: true });
    });

    /** Writes a CSV file and loads it with `manifest`. */
    async function load(content: string, manifest: Record<string, unknown>, into = tables) {
      const file = path.join(dir, `file${++files}.csv`);
      await writeFile(file, content);
      return into.load(file, manifest);
    }
    const rows = async (id: string, project = tables) => (await project.preview(id, { limit: 1000 })).rows;

    it('full load creates the table, a second full load replaces its rows', async () => {
      const r = await load(
        csv([
          ['id', 'name'],
          ['1', 'a'],
          ['2', 'b'],
        ]),
        { destination: 'in.c-shop.users' },
      );
      assert.deepEqual(r, { tableId: 'in.c-shop.users', rowsInFile: 2, tableCreated: true, columnsAdded: [] });
      await load(
        csv([
          ['id', 'name'],
          ['3', 'c'],
        ]),
        { destination: 'in.c-shop.users' },
      );
      assert.deepEqual(await rows('in.c-shop.users'), [['3', 'c']]);
      const detail = await tables.table('in.c-shop.users');
      assert.deepEqual(
        {
          ...detail,
          created: undefined,
          lastImportDate: undefined,
          lastChangeDate: undefined,
          dataSizeBytes: undefined,
        },
        {
          id: 'in.c-shop.users',
          bucketId: 'in.c-shop',
          name: 'users',
          columns: ['id', 'name'],
          primaryKey: [],
          rowsCount: 1,
          created: undefined,
          lastImportDate: undefined,
          lastChangeDate: undefined,
          dataSizeBytes: undefined,
          metadata: [],
          columnMetadata: new Map(),
        },
      );
      assert.ok(detail.dataSizeBytes > 0, 'the table takes some bytes');
      assert.equal(detail.created, '2025-01-01T00:00:00+0000');
      assert.equal(detail.lastImportDate, '2025-01-01T00:00:01+0000');
      assert.deepEqual(await tables.listBuckets(), [
        { id: 'in.c-shop', stage: 'in', created: '2025-01-01T00:00:00+0000', description: '', metadata: [] },
      ]);
      assert.deepEqual(
        (await tables.listTables()).map((t) => t.id),
        ['in.c-shop.users'],
      );
    });

    it('incremental without a key appends', async () => {
      await load(csv([['id'], ['1']]), { destination: 'in.c-b.t' });
      await load(csv([['id'], ['1'], ['2']]), { destination: 'in.c-b.t', incremental: true });
      assert.deepEqual(await rows('in.c-b.t'), [['1'], ['1'], ['2']]);
    });

    it('incremental with a key upserts; the last row of a key in the file wins, across batches too', async () => {
      await load(
        csv([
          ['id', 'v'],
          ['1', 'old'],
          ['2', 'old'],
        ]),
        { destination: 'in.c-b.t', primary_key: ['id'] },
      );
      const many = Array.from({ length: 1200 }, (_, i) => [String(i % 700), `v${i}`]); // keys 0..499 twice: within one batch of 1000 and across batches
      await load(csv([['id', 'v'], ...many]), { destination: 'in.c-b.t', incremental: true, primary_key: ['id'] });
      const byKey = new Map((await tables.preview('in.c-b.t', { limit: 1000 })).rows.map(([id, v]) => [id, v]));
      assert.equal(byKey.size, 700);
      assert.equal(byKey.get('1'), 'v701');
      assert.equal(byKey.get('2'), 'v702');
      assert.equal(byKey.get('699'), 'v699');
      assert.deepEqual((await tables.table('in.c-b.t')).primaryKey, ['id']);
      await assert.rejects(
        load(csv([['id', 'v']]), { destination: 'in.c-b.t', primary_key: ['v'] }),
        userError(/primary_key \["v"\] differs from the key/),
      );
    });

    it('a key repeated in the file of a new table, of a full load and of an incremental one: the last row of each key stays (in file order in a new table)', async () => {
      // keys of two columns; 1500 rows cross batches; (k, 0) repeats far apart, (k, 1) next to itself
      const file = (tag: string) => [
        ['a', 'b', 'v'],
        ...Array.from({ length: 1500 }, (_, i) => [
          String(i % 600),
          String(i % 2 === 0 && i < 1200 ? 0 : 1),
          `${tag}${i}`,
        ]),
        ['5', '1', `${tag}-last`],
      ];
      const expected = (tag: string) => {
        const last = new Map<string, string[]>();
        for (const row of file(tag).slice(1)) {
          last.delete(`${row[0]}|${row[1]}`);
          last.set(`${row[0]}|${row[1]}`, row);
        }
        return [...last.values()];
      };
      const all = async (id: string) => {
        const out: string[][] = [];
        await tables.read(id, {}, async (batch) => void out.push(...batch.map((r) => r.slice(0, 3))));
        return out;
      };
      await load(csv(file('new')), { destination: 'in.c-r.t', primary_key: ['a', 'b'] });
      assert.deepEqual(await all('in.c-r.t'), expected('new'));
      // into an existing table rows may fill space a vacuum freed: the same rows, compared in any order
      const sorted = (rows: string[][]) => rows.map((r) => JSON.stringify(r)).sort();
      await load(csv(file('full')), { destination: 'in.c-r.t', primary_key: ['a', 'b'] });
      assert.deepEqual(sorted(await all('in.c-r.t')), sorted(expected('full')));
      await load(csv(file('inc')), { destination: 'in.c-r.t', incremental: true, primary_key: ['a', 'b'] });
      assert.deepEqual(sorted(await all('in.c-r.t')), sorted(expected('inc')));
      // unique keys in a new table take the same path without the deduplication
      await load(
        csv([
          ['a', 'v'],
          ['2', 'x'],
          ['1', 'y'],
        ]),
        { destination: 'in.c-r.u', primary_key: ['a'] },
      );
      assert.deepEqual(await all('in.c-r.u'), [
        ['2', 'x'],
        ['1', 'y'],
      ]);
    });

    it('an incremental load by key replaces rows; a replaced row has "" in the columns the file lacks', async () => {
      const sorted = (rows: string[][]) => rows.map((r) => JSON.stringify(r)).sort();
      const byKey = { destination: 'in.c-u.t', incremental: true, primary_key: ['id'] };
      const first = [
        ['id', 'a', 'b'],
        ['1', 'a1', 'b1'],
        ['2', 'a2', 'b2'],
        ['3', 'a3', 'b3'],
      ];
      await load(csv(first), { destination: 'in.c-u.t', primary_key: ['id'] });
      await load(
        csv([
          ['id', 'b'],
          ['2', 'new2'],
          ['4', 'new4'],
        ]),
        byKey,
      );
      const after = [
        ['1', 'a1', 'b1'],
        ['2', '', 'new2'],
        ['3', 'a3', 'b3'],
        ['4', '', 'new4'],
      ];
      assert.deepEqual(sorted(await rows('in.c-u.t')), sorted(after));
      // only the key columns in the file: the replaced row keeps its key, the rest ''
      await load(csv([['id'], ['3']]), byKey);
      after[2] = ['3', '', ''];
      assert.deepEqual(sorted(await rows('in.c-u.t')), sorted(after));
      const detail = await tables.table('in.c-u.t');
      assert.equal(detail.rowsCount, 4);
      assert.equal(detail.lastChangeDate, detail.lastImportDate, 'the load changed the table');
    });

    it('a key given to a table that already had rows (a key repeated in them) upserts by that key', async () => {
      const sorted = (rows: string[][]) => rows.map((r) => JSON.stringify(r)).sort();
      await load(
        csv([
          ['id', 'v'],
          ['1', 'x'],
          ['1', 'y'],
          ['2', 'z'],
        ]),
        { destination: 'in.c-k.t' },
      );
      const byKey = { destination: 'in.c-k.t', incremental: true, primary_key: ['id'] };
      await load(
        csv([
          ['id', 'v'],
          ['1', 'one'],
          ['3', 'three'],
        ]),
        byKey,
      );
      assert.deepEqual(
        sorted(await rows('in.c-k.t')),
        sorted([
          ['1', 'one'],
          ['2', 'z'],
          ['3', 'three'],
        ]),
      );
      await load(
        csv([
          ['id', 'v'],
          ['2', 'two'],
        ]),
        { destination: 'in.c-k.t', incremental: true },
      );
      assert.deepEqual(
        sorted(await rows('in.c-k.t')),
        sorted([
          ['1', 'one'],
          ['2', 'two'],
          ['3', 'three'],
        ]),
      );
    });

    it('adds new columns of a file; existing rows get an empty string', async () => {
      await load(csv([['id'], ['1']]), { destination: 'in.c-b.t' });
      const r = await load(
        csv([
          ['id', 'extra'],
          ['2', 'x'],
        ]),
        { destination: 'in.c-b.t', incremental: true },
      );
      assert.deepEqual(r.columnsAdded, ['extra']);
      assert.deepEqual(await rows('in.c-b.t'), [
        ['1', ''],
        ['2', 'x'],
      ]);
      assert.deepEqual((await tables.preview('in.c-b.t', { columns: ['extra'] })).rows, [[''], ['x']]);
    });

    it('a header-only file creates the table; a full load of one empties it', async () => {
      await load('id,name\n', { destination: 'in.c-b.empty' });
      assert.equal((await tables.table('in.c-b.empty')).rowsCount, 0);
      await load(csv([['id'], ['1']]), { destination: 'in.c-b.t' });
      await load('id\n', { destination: 'in.c-b.t', incremental: true });
      assert.equal((await tables.table('in.c-b.t')).rowsCount, 1);
      await load('id\n', { destination: 'in.c-b.t' });
      assert.equal((await tables.table('in.c-b.t')).rowsCount, 0);
    });

    it('a headless file takes its columns from the manifest', async () => {
      await load(
        csv([
          ['1', 'a'],
          ['2', 'b'],
        ]),
        { destination: 'out.c-b.t', columns: ['id', 'name'] },
      );
      assert.deepEqual((await tables.table('out.c-b.t')).columns, ['id', 'name']);
      assert.deepEqual(await rows('out.c-b.t'), [
        ['1', 'a'],
        ['2', 'b'],
      ]);
    });

    it('delete_where deletes matching rows before an incremental load (eq and ne)', async () => {
      await load(
        csv([
          ['id', 'day'],
          ['1', 'mon'],
          ['2', 'tue'],
          ['3', 'wed'],
        ]),
        { destination: 'in.c-b.t' },
      );
      await load(
        csv([
          ['id', 'day'],
          ['4', 'mon'],
        ]),
        {
          destination: 'in.c-b.t',
          incremental: true,
          delete_where_column: 'day',
          delete_where_values: ['mon', 'tue'],
          delete_where_operator: 'eq',
        },
      );
      assert.deepEqual(await rows('in.c-b.t'), [
        ['3', 'wed'],
        ['4', 'mon'],
      ]);
      await load('id,day\n', {
        destination: 'in.c-b.t',
        incremental: true,
        delete_where_column: 'day',
        delete_where_values: ['mon'],
        delete_where_operator: 'ne',
      });
      assert.deepEqual(await rows('in.c-b.t'), [['4', 'mon']]);
      await assert.rejects(
        load('id,day\n', {
          destination: 'in.c-b.t',
          incremental: true,
          delete_where_column: 'nope',
          delete_where_values: ['x'],
        }),
        userError(/delete_where_column nope is not a column/),
      );
    });

    it('hostile names: SQL, quotes, 200 characters and unicode in bucket, table and column names', async () => {
      const evil = '"; DROP TABLE storage_tables;--';
      const long = 'ž'.repeat(200);
      const table = `in.c-${evil}.${long}`;
      const columns = [evil, long, '🙂 ünï', "'", 'a"b', `${long}2`];
      await load(csv([columns, columns.map((_, i) => `v${i}`)]), { destination: table, primary_key: [evil] });
      await load(csv([columns, columns.map((_, i) => (i === 0 ? 'v0' : `w${i}`))]), {
        destination: table,
        incremental: true,
      });
      const detail = await tables.table(table);
      assert.deepEqual(detail.columns, columns);
      assert.deepEqual(detail.primaryKey, [evil]);
      assert.deepEqual(await rows(table), [['v0', 'w1', 'w2', 'w3', 'w4', 'w5']]);
      assert.deepEqual(
        (await tables.listTables(`in.c-${evil}`)).map((t) => t.name),
        [long],
      );
      const bucket = `in.c-psql-${randomBytes(4).toString('hex')}`; // a schema name no other test database uses
      await load(csv([['x'], ['1']]), { destination: `${bucket}.users` }); // the store's own tables survived
      if (backend.db.dialect.name === 'postgres') {
        // psql users see the bucket as a schema and the table under its own name
        assert.deepEqual(await backend.db.all(`SELECT "x" FROM "${bucket}"."users"`), [{ x: '1' }]);
        const fitted = await backend.db.all<{ tablename: string }>(
          'SELECT tablename FROM pg_tables WHERE tablename LIKE ?',
          [`${'ž'.repeat(20)}%`],
        );
        assert.deepEqual(
          fitted.map((t) => Buffer.byteLength(t.tablename)),
          [63],
          'a 400-byte name is cut to 63 bytes with a hash',
        );
      }
      await tables.deleteTable(table);
      await assert.rejects(tables.table(table), userError(/does not exist/));
    });

    it('a load failing in the middle leaves the table exactly as it was', async () => {
      await load(
        csv([
          ['id', 'v'],
          ['1', 'a'],
        ]),
        { destination: 'in.c-b.t' },
      );
      const before = await tables.table('in.c-b.t');
      const good = Array.from({ length: 2000 }, (_, i) => [String(i), 'x', 'new']);
      const content = csv([['id', 'v', 'added'], ...good.slice(0, 1500)]) + '"bad","row"\n' + csv(good.slice(1500));
      await assert.rejects(
        load(content, { destination: 'in.c-b.t' }),
        userError(/file\d+\.csv, line 1502: 2 fields where the table has 3 columns/),
      );
      // the bytes may grow (PostgreSQL keeps the rolled-back rows' space until VACUUM); nothing else changes
      assert.deepEqual({ ...(await tables.table('in.c-b.t')), dataSizeBytes: 0 }, { ...before, dataSizeBytes: 0 });
      assert.deepEqual(await rows('in.c-b.t'), [['1', 'a']]);
      // a new table and bucket are not left behind either
      await assert.rejects(load(content, { destination: 'in.c-new.t' }), UserError);
      assert.deepEqual(
        (await tables.listBuckets()).map((b) => b.id),
        ['in.c-b'],
      );
    });

    it('values survive the bulk path unchanged: quotes, separators, line breaks, backslashes, COPY markers, unicode, empty', async () => {
      const values = [
        '',
        '"',
        '""',
        'a,b',
        'line\nbreak',
        'cr\r\nlf',
        '\\',
        '\\.',
        '\\N',
        'NULL',
        ' padded ',
        'žluťoučký 🙂',
        "'; DROP TABLE storage_tables; --",
        '\t',
      ];
      const content = csv([['id', 'v'], ...values.map((v, i) => [String(i), v])]);
      const expected = values.map((v, i) => [String(i), v]);
      await load(content, { destination: 'in.c-v.t' });
      assert.deepEqual(await rows('in.c-v.t'), expected);
      // the key path (a stage on PostgreSQL) carries them too
      await load(content, { destination: 'in.c-v.keyed', primary_key: ['id'] });
      assert.deepEqual(await rows('in.c-v.keyed'), expected);
      // an unquoted \. alone on a line is COPY's end-of-data marker in its text format: here it is data
      await load('v\n\\.\nafter\n', { destination: 'in.c-v.marker' });
      assert.deepEqual(await rows('in.c-v.marker'), [['\\.'], ['after']]);
      // the file's own text as it reaches COPY: a BOM, CRLF, CR and LF mixed, unquoted empty values (not NULL),
      // line breaks inside quotes, an empty line (one empty value), \. alone, no line break at the end
      const raw = '\uFEFFa,b\r\n,\r1,\n,2\r\n"x\r\ny","\r"\n\\.,""\n"",\n\\.,\\.';
      const rawRows = [
        ['', ''],
        ['1', ''],
        ['', '2'],
        ['x\r\ny', '\r'],
        ['\\.', ''],
        ['', ''],
        ['\\.', '\\.'],
      ];
      await load(raw, { destination: 'in.c-v.raw' });
      assert.deepEqual(await rows('in.c-v.raw'), rawRows);
      await load(raw, { destination: 'in.c-v.rawkeyed', primary_key: ['b'] });
      assert.deepEqual(await rows('in.c-v.rawkeyed'), [
        ['', '2'],
        ['x\r\ny', '\r'],
        ['', ''],
        ['\\.', '\\.'],
      ]);
      await load('v\n\n\\.\n', { destination: 'in.c-v.one' });
      assert.deepEqual(await rows('in.c-v.one'), [[''], ['\\.']]);
      await load('v\n\\.\n\n', { destination: 'in.c-v.onekeyed', primary_key: ['v'] });
      assert.deepEqual(await rows('in.c-v.onekeyed'), [['\\.'], ['']]);
    });

    it('refuses a NUL character, naming the file and line; nothing is loaded', async () => {
      await load(
        csv([
          ['id', 'v'],
          ['1', 'a'],
        ]),
        { destination: 'in.c-n.t' },
      );
      const content =
        csv([
          ['id', 'v'],
          ['2', 'multi\nline'],
          ['3', 'ok'],
        ]) + '4,"bad\0value"\n';
      await assert.rejects(
        load(content, { destination: 'in.c-n.t' }),
        userError(/file\d+\.csv, line 5: a value contains a NUL character \(byte 0\)/),
      );
      await assert.rejects(
        load(content, { destination: 'in.c-n.t', incremental: true, primary_key: ['id'] }),
        userError(/line 5: a value contains a NUL/),
      );
      assert.deepEqual(await rows('in.c-n.t'), [['1', 'a']]);
    });

    it('a bad record in the middle of a keyed load leaves the table as it was', async () => {
      await load(
        csv([
          ['id', 'v'],
          ['1', 'a'],
        ]),
        { destination: 'in.c-k.t', primary_key: ['id'] },
      );
      const good = Array.from({ length: 3000 }, (_, i) => [String(i), 'new']);
      const content = csv([['id', 'v'], ...good.slice(0, 2500)]) + '"short"\n' + csv(good.slice(2500));
      await assert.rejects(
        load(content, { destination: 'in.c-k.t', incremental: true }),
        userError(/line 2502: 1 fields where the table has 2 columns/),
      );
      assert.deepEqual(await rows('in.c-k.t'), [['1', 'a']]);
      await load(
        csv([
          ['id', 'v'],
          ['1', 'b'],
          ['2', 'c'],
        ]),
        { destination: 'in.c-k.t', incremental: true },
      );
      assert.deepEqual(await rows('in.c-k.t'), [
        ['1', 'b'],
        ['2', 'c'],
      ]);
    });

    it("a key adopted by a table loaded without one: the file's keys replace every row of theirs, other rows stay", async () => {
      await load(
        csv([
          ['id', 'v'],
          ['1', 'a'],
          ['1', 'b'],
          ['2', 'c'],
          ['2', 'd'],
        ]),
        { destination: 'in.c-a.t' },
      );
      await load(
        csv([
          ['id', 'v'],
          ['1', 'new'],
          ['3', 'x'],
        ]),
        { destination: 'in.c-a.t', incremental: true, primary_key: ['id'] },
      );
      assert.deepEqual((await tables.table('in.c-a.t')).primaryKey, ['id']);
      assert.deepEqual((await rows('in.c-a.t')).sort(), [
        ['1', 'new'],
        ['2', 'c'],
        ['2', 'd'],
        ['3', 'x'],
      ]);
    });

    it("delete_where with 50 000 values (more than a statement's parameters), eq and ne; over 100 000 refused", async () => {
      const body = Array.from({ length: 60_000 }, (_, i) => [String(i)]);
      await load(csv([['id'], ...body]), { destination: 'in.c-w.t' });
      const values = Array.from({ length: 50_000 }, (_, i) => String(i * 2)); // the even ids below 100 000
      await load('id\n', {
        destination: 'in.c-w.t',
        incremental: true,
        delete_where_column: 'id',
        delete_where_values: values,
      });
      const left = await tables.table('in.c-w.t');
      assert.equal(left.rowsCount, 30_000);
      assert.deepEqual((await rows('in.c-w.t')).slice(0, 3), [['1'], ['3'], ['5']]);
      await load('id\n', {
        destination: 'in.c-w.t',
        incremental: true,
        delete_where_column: 'id',
        delete_where_values: values.map((v) => String(Number(v) + 1)).slice(0, 20_000),
        delete_where_operator: 'ne',
      });
      assert.equal((await tables.table('in.c-w.t')).rowsCount, 20_000);
      const tooMany = Array.from({ length: 100_001 }, (_, i) => String(i));
      await assert.rejects(
        load('id\n', {
          destination: 'in.c-w.t',
          incremental: true,
          delete_where_column: 'id',
          delete_where_values: tooMany,
        }),
        userError(
          /delete_where_values has 100001 values, more than the 100000 a load takes; delete in several incremental loads/,
        ),
      );
    });

    it('keeps projects apart', async () => {
      await load(csv([['id'], ['mine']]), { destination: 'in.c-shop.users' });
      await load(csv([['id'], ['theirs']]), { destination: 'in.c-shop.users' }, other);
      assert.deepEqual(await rows('in.c-shop.users'), [['mine']]);
      assert.deepEqual(await rows('in.c-shop.users', other), [['theirs']]);
      await other.deleteBucket('in.c-shop');
      assert.deepEqual(await rows('in.c-shop.users'), [['mine']]);
      await assert.rejects(other.table('in.c-shop.users'), userError(/does not exist in this project/));
    });

    it('loadFile reads the manifest beside the file; without one it takes the default destination', async () => {
      const file = path.join(dir, 'users.csv');
      await writeFile(file, "id;name\n1;'a;b'\n");
      await writeFile(
        `${file}.manifest`,
        JSON.stringify({ destination: 'in.c-shop.users', delimiter: ';', enclosure: "'" }),
      );
      await tables.loadFile(file);
      assert.deepEqual(await rows('in.c-shop.users'), [['1', 'a;b']]);
      const bare = path.join(dir, 'bare.csv');
      await writeFile(bare, 'id\n2\n');
      await tables.loadFile(bare, 'in.c-shop.bare');
      assert.deepEqual(await rows('in.c-shop.bare'), [['2']]);
      await writeFile(`${bare}.manifest`, '{not json');
      await assert.rejects(tables.loadFile(bare), userError(/bare\.csv\.manifest is not valid JSON/));
    });

    it('refuses bad destinations and columns with clear errors', async () => {
      await assert.rejects(
        load('a\n', { destination: 'shop.users' }),
        userError(/"?shop\.users"? is not a table id of the form in\.c-<bucket>\.<table>/),
      );
      await assert.rejects(load('a\n', { destination: 'in.c-.t' }), userError(/not a table id/));
      await assert.rejects(load('a,a\n', { destination: 'in.c-b.t' }), userError(/column a appears twice/));
      await assert.rejects(load('a,\n', { destination: 'in.c-b.t' }), userError(/column 2 \(""\) is empty/));
      await assert.rejects(load('_timestamp\n', { destination: 'in.c-b.t' }), userError(/reserved/));
      await assert.rejects(load('', { destination: 'in.c-b.t' }), userError(/the file is empty/));
      await assert.rejects(load('a\n"unclosed\n', { destination: 'in.c-b.t' }), userError(/invalid CSV/));
      await assert.rejects(
        load('a\n', { destination: 'in.c-b.t', delete_where_column: 'a', delete_where_operator: 'gt' }),
        userError(/"eq" or "ne"/),
      );
      await assert.rejects(
        load('a\n', { destination: 'in.c-b.t', delimiter: "'", enclosure: "'" }),
        userError(/delimiter and enclosure are both "'"; they must differ/),
      );
      await assert.rejects(
        load('a\n', { destination: 'in.c-b.t', delimiter: '🙂' }),
        userError(/delimiter must be one character \(not a line break, not an emoji\)/),
      );
      await assert.rejects(
        load('a\nx"y\n', { destination: 'in.c-b.t' }),
        userError(/invalid CSV on line 2: a "\\"" inside a value not enclosed/),
      );
      assert.deepEqual(await tables.listBuckets(), []);
    });

    it('reads chosen columns of rows filtered by a column (eq, ne) and by changedSince', async () => {
      await load(
        csv([
          ['id', 'city'],
          ['1', 'Prague'],
          ['2', 'Brno'],
          ['3', 'Ostrava'],
        ]),
        { destination: 'in.c-r.t' },
      );
      await load(
        csv([
          ['id', 'city'],
          ['4', 'Brno'],
        ]),
        { destination: 'in.c-r.t', incremental: true },
      ); // the clock moved on a second
      const secondLoad = parseChangedSince((await tables.table('in.c-r.t')).lastImportDate);
      const read = async (query: TableQuery) => {
        const batches: string[][][] = [];
        const columns = await tables.read('in.c-r.t', query, async (rows) => void batches.push(rows));
        return { columns, rows: batches.flat() };
      };
      assert.deepEqual(await read({ columns: ['city'], whereColumn: 'city', whereValues: ['Brno'] }), {
        columns: ['city'],
        rows: [['Brno'], ['Brno']],
      });
      assert.deepEqual(
        (await read({ whereColumn: 'city', whereValues: ['Brno', 'Prague'], whereOperator: 'ne' })).rows,
        [['3', 'Ostrava']],
      );
      assert.deepEqual((await read({ changedSince: secondLoad })).rows, [['4', 'Brno']]);
      assert.deepEqual((await read({ limit: 2 })).rows, [
        ['1', 'Prague'],
        ['2', 'Brno'],
      ]);
      assert.deepEqual(await tables.preview('in.c-r.t', { columns: ['city', 'id'], limit: 1 }), {
        columns: ['city', 'id'],
        rows: [['Prague', '1']],
      });
      await assert.rejects(read({ columns: ['nope'] }), userError(/has no column nope/));
      await assert.rejects(read({ columns: ['id', 'id'] }), userError(/twice/));
      await assert.rejects(read({ whereColumn: 'city' }), userError(/needs at least one value/));
      await assert.rejects(read({ whereValues: ['x'] }), userError(/without whereColumn/));
      await assert.rejects(tables.preview('in.c-r.t', { limit: 1001 }), userError(/from 0 to 1000/));
      await assert.rejects(
        read({}).then(() => tables.read('in.c-r.nope', {}, async () => undefined)),
        userError(/does not exist/),
      );
    });

    it('a read is streamed in bounded batches in insertion order, resuming after each batch', async () => {
      const n = EXPORT_BATCH_ROWS * 2 + 17;
      const body = ['id,v', ...Array.from({ length: n }, (_, i) => `${i},${i % 3}`)].join('\n');
      await load(`${body}\n`, { destination: 'in.c-big.t' });
      const sizes: number[] = [];
      let next = 0;
      let ordered = true;
      await tables.read('in.c-big.t', { whereColumn: 'v', whereValues: ['0', '1', '2'] }, async (rows) => {
        sizes.push(rows.length);
        for (const [id] of rows) ordered &&= Number(id) === next++;
      });
      assert.deepEqual(sizes, [EXPORT_BATCH_ROWS, EXPORT_BATCH_ROWS, 17]);
      assert.ok(ordered, 'rows in insertion order');
      assert.equal(next, n);
    });

    it('hostile column names in a filter stay names: SQL text in a name or a value is data', async () => {
      const evil = 'x" WHERE 1=1; DROP TABLE storage_tables; --';
      await load(
        csv([
          ['id', evil],
          ['1', "' OR '1'='1"],
          ['2', 'b'],
        ]),
        { destination: 'in.c-h.t' },
      );
      const rows: string[][] = [];
      await tables.read(
        'in.c-h.t',
        { columns: [evil], whereColumn: evil, whereValues: ["' OR '1'='1"] },
        async (batch) => void rows.push(...batch),
      );
      assert.deepEqual(rows, [["' OR '1'='1"]]);
      assert.equal((await tables.listTables()).length, 1);
    });

    it("every column name loads and reads back as the user's: names PostgreSQL reserves, keywords, case twins, long names cut alike, names of generated columns", async () => {
      const long = `${'l'.repeat(70)}_a`;
      const names = [
        'xmin',
        'ymin',
        'xmax',
        'ymax',
        'ctid',
        'tableoid',
        'cmin',
        'cmax',
        'oid',
        'XMIN',
        'Ctid',
        'select',
        'user',
        'order',
        'c0',
        'c1',
        'c2_1',
        'gex_seq',
        's0',
        long,
        `${'l'.repeat(70)}_b`,
        fitPostgresIdentifier(long),
        'a"b',
        ' sp ',
        'žluťoučký kůň',
        'Name',
        'name',
      ];
      const row = (r: string) => names.map((n) => `${n}=${r}`);
      const key = ['ctid', 'xmin'];
      // a new keyed table, a key repeated in the file: the last row of it stays
      await load(csv([names, row('1'), row('2'), row('1').map((v, i) => (names[i] === 'ymin' ? 'again' : v))]), {
        destination: 'in.c-sys.t',
        primary_key: key,
      });
      assert.deepEqual(await tables.preview('in.c-sys.t'), {
        columns: names,
        rows: [row('2'), row('1').map((v, i) => (names[i] === 'ymin' ? 'again' : v))],
      });
      // an incremental upsert by the key into the existing table, with new columns (reserved, and named as generated ones)
      const more = [...names, 'CTID', 'c4', 'c5', 'tableoid2'];
      await load(csv([more, [...row('2'), 'n1', 'n2', 'n3', 'n4'], [...row('3'), 'm1', 'm2', 'm3', 'm4']]), {
        destination: 'in.c-sys.t',
        incremental: true,
        primary_key: key,
      });
      const detail = await tables.table('in.c-sys.t');
      assert.deepEqual(detail.columns, more);
      assert.deepEqual(detail.primaryKey, key);
      assert.deepEqual((await tables.preview('in.c-sys.t')).rows, [
        [...row('1').map((v, i) => (names[i] === 'ymin' ? 'again' : v)), '', '', '', ''],
        [...row('2'), 'n1', 'n2', 'n3', 'n4'],
        [...row('3'), 'm1', 'm2', 'm3', 'm4'],
      ]);
      // filters and column lists name them as the user does
      assert.deepEqual(
        await tables.preview('in.c-sys.t', {
          columns: ['tableoid', 'CTID', 'c5'],
          whereColumn: 'xmin',
          whereValues: ['xmin=3'],
        }),
        { columns: ['tableoid', 'CTID', 'c5'], rows: [['tableoid=3', 'm1', 'm3']] },
      );
      assert.deepEqual(
        (
          await tables.preview('in.c-sys.t', {
            columns: ['oid'],
            whereColumn: 'cmax',
            whereValues: ['cmax=3'],
            whereOperator: 'ne',
          })
        ).rows,
        [['oid=1'], ['oid=2']],
      );
      // delete_where on a reserved name
      await load(
        csv([
          ['xmin', 'ctid'],
          ['xmin=9', 'ctid=9'],
        ]),
        {
          destination: 'in.c-sys.t',
          incremental: true,
          delete_where_column: 'xmin',
          delete_where_values: ['xmin=1', 'xmin=3'],
        },
      );
      assert.deepEqual((await tables.preview('in.c-sys.t', { columns: ['xmin', 'ctid', 'Ctid'] })).rows, [
        ['xmin=2', 'ctid=2', 'Ctid=2'],
        ['xmin=9', 'ctid=9', ''],
      ]);
      // a full load replaces the rows as ever
      await load(
        csv([
          ['ctid', 'xmin', 'cmin'],
          ['k', 'x', 'a'],
        ]),
        { destination: 'in.c-sys.t' },
      );
      assert.deepEqual((await tables.preview('in.c-sys.t', { columns: ['cmin', 'xmax', 'xmin'] })).rows, [
        ['a', '', 'x'],
      ]);
    });

    it('moments outside the years 0000-9999 select the right rows, never compared as text', async () => {
      await load(csv([['id'], ['1'], ['2']]), { destination: 'in.c-m.t' });
      const ids = async (query: TableQuery) => (await tables.preview('in.c-m.t', query)).rows.map(([id]) => id);
      const longAgo = parseChangedSince('-999999999 weeks');
      const farAhead = parseChangedSince('999999999999'); // year 33658
      for (const [query, expected] of [
        [{ changedSince: longAgo }, ['1', '2']],
        [{ changedSince: new Date(-8.64e15) }, ['1', '2']],
        [{ changedSince: new Date('-000001-12-31T23:59:59Z') }, ['1', '2']],
        [{ changedSince: farAhead }, []],
        [{ changedSince: new Date('+010000-01-01T00:00:00Z') }, []],
        [{ changedSince: new Date('9999-12-31T23:59:59Z') }, []],
        [{ changedSince: new Date('0000-01-01T00:00:00Z') }, ['1', '2']],
        [{ changedUntil: farAhead }, ['1', '2']],
        [{ changedUntil: longAgo }, []],
        [{ changedSince: longAgo, changedUntil: farAhead }, ['1', '2']],
      ] as Array<[TableQuery, string[]]>) {
        assert.deepEqual(await ids(query), expected, JSON.stringify(query));
      }
    });

    it('a value with NUL in a filter matches no row (eq: none, ne: all), on reads and in delete_where', async () => {
      await load(
        csv([
          ['id', 'v'],
          ['1', 'a'],
          ['2', 'b'],
          ['3', 'c'],
        ]),
        { destination: 'in.c-nul.t' },
      );
      const ids = async (whereValues: string[], whereOperator: 'eq' | 'ne' = 'eq') =>
        (await tables.preview('in.c-nul.t', { whereColumn: 'v', whereValues, whereOperator })).rows.map(([id]) => id);
      assert.deepEqual(await ids(['\0']), []);
      assert.deepEqual(await ids(['a\0', 'b']), ['2']);
      assert.deepEqual(await ids(['\0'], 'ne'), ['1', '2', '3']);
      assert.deepEqual(await ids(['b', '\0b'], 'ne'), ['1', '3']);
      await assert.rejects(
        tables.preview('in.c-nul.t', { whereColumn: 'v\0', whereValues: ['a'] }),
        userError(/has no column/),
      );
      await assert.rejects(tables.preview('in.c-nul.t', { columns: ['\0'] }), userError(/has no column/));
      const incremental = (values: string[], operator: 'eq' | 'ne') =>
        load(
          csv([
            ['id', 'v'],
            ['9', 'z'],
          ]),
          {
            destination: 'in.c-nul.t',
            incremental: true,
            delete_where_column: 'v',
            delete_where_values: values,
            delete_where_operator: operator,
          },
        );
      await incremental(['\0', 'a\0'], 'eq');
      assert.deepEqual(await ids(['\0'], 'ne'), ['1', '2', '3', '9']);
      await incremental(['c', 'c\0'], 'eq');
      assert.deepEqual(await ids(['\0'], 'ne'), ['1', '2', '9', '9']);
      await incremental([...Array.from({ length: 1500 }, (_, i) => `x${i}`), '\0', 'a'], 'ne'); // through the temporary table of values
      assert.deepEqual(await ids(['\0'], 'ne'), ['1', '9']);
      await incremental(['\0'], 'ne');
      assert.deepEqual(await ids(['\0'], 'ne'), ['9']);
    });
  });
}

describe('parseChangedSince', () => {
  const now = new Date(Date.UTC(2025, 5, 10, 12, 0, 0));
  it('takes Unix seconds, ISO dates and date-times (UTC without a zone) and relative "-N units"', () => {
    assert.equal(parseChangedSince('1700000000').toISOString(), '2023-11-14T22:13:20.000Z');
    assert.equal(parseChangedSince('2025-01-31').toISOString(), '2025-01-31T00:00:00.000Z');
    assert.equal(parseChangedSince('2025-01-31 10:20').toISOString(), '2025-01-31T10:20:00.000Z');
    assert.equal(parseChangedSince('2025-01-31T10:20:30+0200').toISOString(), '2025-01-31T08:20:30.000Z');
    assert.equal(parseChangedSince('-2 days', now).toISOString(), '2025-06-08T12:00:00.000Z');
    assert.equal(parseChangedSince('-1 hour', now).toISOString(), '2025-06-10T11:00:00.000Z');
  });
  it('refuses anything else, naming what it takes', () => {
    for (const bad of [
      'yesterday',
      '2025-13-45',
      '',
      '-2 fortnights',
      '1e9',
      '2025-02-30',
      '2023-02-29',
      '2025-00-10',
      '2025-04-31T00:00:00Z',
      '-1',
      '123456789012345678901',
    ]) {
      assert.throws(() => parseChangedSince(bad, now), userError(/is not a moment: give a Unix timestamp/), bad);
    }
    assert.equal(parseChangedSince('2024-02-29').toISOString(), '2024-02-29T00:00:00.000Z');
  });
  it('is always a valid Date: moments beyond what a Date holds are clamped to its bounds', () => {
    assert.equal(parseChangedSince('-999999999 weeks', now).getTime(), -8.64e15);
    assert.equal(parseChangedSince('99999999999999999999', now).getTime(), 8.64e15);
    assert.equal(parseChangedSince('999999999999', now).toISOString(), '+033658-09-27T01:46:39.000Z');
    assert.equal(parseChangedSince('0000-01-01', now).toISOString(), '0000-01-01T00:00:00.000Z');
  });
});
