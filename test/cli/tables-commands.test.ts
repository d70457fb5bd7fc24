import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localToken } from '../../src/store/embedded/tokens.js';
import { EXPORT_BATCH_ROWS, ProjectTables } from '../../src/store/tables/index.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { StoreCli } from '../support/store-cli.js';
import { storeBackends, TEST_KEY, type FreshStore } from '../support/store.js';

const csv = (rows: string[][]) =>
  rows.map((r) => r.map((v) => `"${v.replaceAll('"', '""')}"`).join(',') + '\n').join('');
const ANSI = 'red\u001b[31m\u001b[2Jcleared\rback\u202egnp';
/** Terminal control characters that must never reach stdout or stderr raw from a text format. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f\u202e]/;

/** `gex tables …` as real processes on a real SQLite file and on PostgreSQL; tables loaded with ProjectTables. */
for (const backend of storeBackends()) {
  describe(`gex tables commands (${backend.name})`, function () {
    this.timeout(120_000);
    let dir: string;
    let store: FreshStore;
    let cli: StoreCli;

    /** Runs `work` with the ProjectTables of `project` in the store, closing it afterwards. */
    async function withTables<T>(work: (tables: ProjectTables) => Promise<T>, project = 'default'): Promise<T> {
      const opened = await openEmbeddedStore(store.location, TEST_KEY);
      try {
        return await work(new ProjectTables(opened.db, (await localToken(opened.db, project)).projectId));
      } finally {
        await opened.close();
      }
    }
    let files = 0;
    async function load(content: string, manifest: Record<string, unknown>, project = 'default') {
      const file = path.join(dir, `load${++files}.csv`);
      await writeFile(file, content);
      await withTables((t) => t.load(file, manifest), project);
    }

    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tables-cli-'));
      store = await backend.fresh();
      // commands run in `dir`: a default export file lands there, and a test sees every file written
      cli = new StoreCli({ ...TEST_KEY, GEX_STORE: store.location, KBC_URL: '', KBC_TOKEN: '' }, dir);
      await withTables(async () => undefined); // creates the store
    });
    afterEach(async () => {
      // bucket schemas on PostgreSQL live beside the store's schema: remove them with the store
      for (const project of ['default', 'other'])
        await withTables(async (t) => {
          for (const b of await t.listBuckets()) await t.deleteBucket(b.id);
        }, project);
      await store.dispose();
      await rm(dir, { recursive: true, force: true });
    });

    const run = (args: string[]) => cli.ok(['tables', ...args]);
    const fails = (args: string[]) => cli.fails(['tables', ...args]);

    it('list, show and preview: text for people (values made safe), JSON for machines, an empty project explained', async () => {
      assert.match(
        await run(['list']),
        /^No tables in the project of .*"gex run --config-id <id>" loads each row's out\/tables into the project's Storage tables\.\n$/,
      );
      await load(
        csv([
          ['id', 'name', 'note'],
          ['1', ANSI, 'x'.repeat(100)],
          ['2', 'line\nbreak', ''],
        ]),
        { destination: 'in.c-shop.users', primary_key: ['id'] },
      );
      await load(csv([['n'], ['1']]), { destination: 'out.c-report.totals' });

      assert.deepEqual(
        (await run(['list']))
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('\t').slice(0, 3)),
        [
          ['in.c-shop.users', '2 rows', '3 columns'],
          ['out.c-report.totals', '1 row', '1 column'],
        ],
      );
      assert.match(
        await run(['list', '--bucket', 'out.c-report']),
        /^out\.c-report\.totals\t1 row\t1 column\tlast import \d{4}-\d\d-\d\dT/,
      );
      const listed = await cli.json(['tables', 'list']);
      assert.deepEqual(
        listed.map((t: { id: string }) => t.id),
        ['in.c-shop.users', 'out.c-report.totals'],
      );
      const { created, lastImportDate, lastChangeDate, ...shape } = listed[0];
      assert.deepEqual(shape, {
        id: 'in.c-shop.users',
        name: 'users',
        bucket: { id: 'in.c-shop', stage: 'in' },
        columns: ['id', 'name', 'note'],
        primaryKey: ['id'],
        rowsCount: 2,
        metadata: [],
      });
      for (const date of [created, lastImportDate, lastChangeDate])
        assert.match(date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/);
      assert.match(await fails(['list', '--bucket', 'in.c-none']), /Bucket in\.c-none does not exist in this project/);

      const shown = await run(['show', 'in.c-shop.users']);
      assert.match(
        shown,
        /^Table in\.c-shop\.users\n {2}bucket {7}in\.c-shop\n {2}columns {6}id, name, note \(3\)\n {2}primary key {2}id\n {2}rows {9}2\n {2}created {6}\S+\n {2}last import {2}\S+\n {2}last change {2}\S+\n$/,
      );
      // the detail has its columns' metadata too (a list only its own)
      const { columnMetadata, ...detail } = await cli.json(['tables', 'show', 'in.c-shop.users']);
      assert.deepEqual(detail, listed[0]);
      assert.deepEqual(columnMetadata, {});

      const text = await run(['preview', 'in.c-shop.users']);
      assert.ok(!RAW_CONTROL.test(text), `no raw control character in ${JSON.stringify(text)}`);
      const lines = text.split('\n');
      assert.match(lines[0], /^id {2}name +note$/);
      // escaped, then cut at 40 characters
      assert.equal(lines[2], `1   ${'red\\u001b[31m\\u001b[2Jcleared\\rback\\u20…'}  ${'x'.repeat(39)}…`);
      assert.match(lines[3], /^2 {3}line\\nbreak$/);
      assert.equal(lines[4], '(2 rows)');
      assert.deepEqual(await cli.json(['tables', 'preview', 'in.c-shop.users', '--columns', 'name,id']), {
        columns: ['name', 'id'],
        rows: [
          [ANSI, '1'],
          ['line\nbreak', '2'],
        ],
      });
      assert.equal(
        await run(['preview', 'in.c-shop.users', '--format', 'csv', '--limit', '1', '--columns', 'id']),
        '"id"\n"1"\n',
      );
      assert.match(
        await run(['preview', 'in.c-shop.users', '--limit', '1']),
        /\(the first 1 row; --limit shows up to 1000\)\n$/,
      );
    });

    it('preview filters: columns, where eq/ne with comma values, changed-since; bad options refused with what to do', async () => {
      await load(
        csv([
          ['id', 'city'],
          ['1', 'Prague, CZ'],
          ['2', 'Brno'],
          ['3', 'Oslo'],
        ]),
        { destination: 'in.c-geo.cities' },
      );
      const rows = async (args: string[]) => (await cli.json(['tables', 'preview', 'in.c-geo.cities', ...args])).rows;
      assert.deepEqual(await rows(['--where-column', 'id', '--where-values', '1,3']), [
        ['1', 'Prague, CZ'],
        ['3', 'Oslo'],
      ]);
      assert.deepEqual(
        await rows([
          '--where-column',
          'city',
          '--where-value',
          'Prague, CZ',
          '--where-operator',
          'ne',
          '--columns',
          'id',
        ]),
        [['2'], ['3']],
      );
      assert.deepEqual(await rows(['--changed-since', '-2 days']), [
        ['1', 'Prague, CZ'],
        ['2', 'Brno'],
        ['3', 'Oslo'],
      ]);
      assert.deepEqual(await rows(['--changed-since', '2999-01-01']), []);

      assert.match(
        await fails(['preview', 'in.c-geo.cities', '--limit', '-1']),
        /--limit takes a whole number of rows from 0 up to 1000, got "-1"\./,
      );
      assert.match(
        await fails(['preview', 'in.c-geo.cities', '--limit', 'abc']),
        /--limit takes a whole number of rows from 0 up to 1000, got "abc"\./,
      );
      assert.match(
        await fails(['preview', 'in.c-geo.cities', '--limit', '1001']),
        /--limit is at most 1000 here, got 1001/,
      );
      assert.match(
        await fails(['preview', 'in.c-geo.cities', '--columns', 'id,nope\u001b[31m']),
        /Table in\.c-geo\.cities has no column "nope\\u001b\[31m" \(columns\)/,
      );
      assert.match(
        await fails(['preview', 'in.c-geo.cities', '--where-column', 'zip', '--where-values', '1']),
        /has no column zip \(whereColumn\)/,
      );
      assert.match(
        await fails(['preview', 'in.c-geo.cities', '--where-values', '1']),
        /--where-values needs --where-column/,
      );
      assert.match(
        await fails(['preview', 'in.c-geo.cities', '--where-column', 'id']),
        /--where-column needs --where-values/,
      );
      assert.match(
        await fails(['preview', 'in.c-geo.cities', '--changed-since', 'yesterday']),
        /--changed-since "yesterday" is not a moment: give a Unix timestamp/,
      );
      for (const output of cli.outputs) assert.ok(!RAW_CONTROL.test(output), output);
    });

    it('preview and export of a table whose columns PostgreSQL reserves, with moments far outside the calendar: right rows or exit 1, never a crash', async () => {
      const columns = ['xmin', 'ymin', 'xmax', 'ymax', 'ctid', 'tableoid', 'cmin', 'cmax', 'oid'];
      await load(csv([columns, columns.map((c) => `${c}1`)]), { destination: 'in.c-geo.boxes', primary_key: ['ctid'] });
      const preview = (args: string[]) => cli.json(['tables', 'preview', 'in.c-geo.boxes', ...args]);
      assert.deepEqual(await preview([]), { columns, rows: [columns.map((c) => `${c}1`)] });
      assert.deepEqual((await preview(['--changed-since', '-999999999 weeks', '--columns', 'xmin,ctid'])).rows, [
        ['xmin1', 'ctid1'],
      ]);
      assert.deepEqual(
        (await preview(['--changed-since', '999999999999'])).rows,
        [],
        'year 33658: nothing changed since',
      );
      assert.match(
        await fails(['preview', 'in.c-geo.boxes', '--changed-since', '2025-02-30']),
        /--changed-since "2025-02-30" is not a moment/,
      );
      await run([
        'export',
        'in.c-geo.boxes',
        '--output',
        'boxes.csv',
        '--where-column',
        'tableoid',
        '--where-values',
        'tableoid1',
      ]);
      assert.equal(
        await readFile(path.join(dir, 'boxes.csv'), 'utf8'),
        `${columns.map((c) => `"${c}"`).join(',')}\n${columns.map((c) => `"${c}1"`).join(',')}\n`,
      );
    });

    it('hostile table ids are refused in one safe line, and never become a file', async () => {
      await load(csv([['id'], ['1']]), { destination: 'in.c-a.b' });
      const hostile = [
        'in.c-a.../../../etc/passwd',
        '../../etc/passwd',
        'in.c-a.b\u001b[2J\nError: forged',
        'in.c-a."quoted" \'b\'',
        `in.c-a.${'x'.repeat(5000)}`,
      ];
      for (const id of hostile) {
        for (const args of [
          ['show', id],
          ['preview', id],
          ['export', id],
          ['delete', id],
        ]) {
          const stderr = await fails(args);
          assert.ok(!RAW_CONTROL.test(stderr), stderr);
          assert.equal(stderr.trim().split('\n').length, 1, `one line: ${stderr}`);
          assert.ok(stderr.length < 1200 || id.length === 5007, stderr.slice(0, 200));
        }
      }
      assert.match(
        await fails(['show', 'in.c-a.b\u001b[2J\nError: forged']),
        /the table name of "in\.c-a\.b\\u001b\[2J\\nError: forged" contains a control or invisible character/,
      );
      assert.match(await fails(['show', `in.c-a.${'x'.repeat(5000)}`]), /is longer than 1000 characters/);
      assert.match(await fails(['export', 'in.c-a.../../../etc/passwd']), /does not exist in this project/);
      assert.match(await fails(['delete', '--bucket', 'in.c-../x']), /Bucket id in\.c-\.\.\/x is not of the form/);
      // a table whose name is a path exists, but does not name the default file
      await load(csv([['id'], ['1']]), { destination: 'in.c-a.../../escaped' });
      assert.match(
        await fails(['export', 'in.c-a.../../escaped']),
        /The table id in\.c-a\.\.\.\/\.\.\/escaped cannot name a file \(contains a path separator .*\): name one with --output\./,
      );
      assert.ok(!existsSync(path.join(dir, '..', 'escaped.csv')));
      await run(['export', 'in.c-a.../../escaped', '--output', 'escaped.csv']);
      assert.deepEqual(
        (await readdir(dir)).filter((f) => !f.startsWith('load')).sort(),
        ['escaped.csv', 'escaped.csv.manifest'],
        'no other file was written',
      );
    });

    it(`export streams a table larger than one batch (${EXPORT_BATCH_ROWS} rows) to Keboola's CSV with its manifest, never half a file, never over one`, async () => {
      const count = 12_000;
      const data = Array.from({ length: count }, (_, i) => [String(i), i % 7 === 0 ? `quote "${i}"\nline` : `v${i}`]);
      await load(csv([['id', 'value'], ...data]), { destination: 'in.c-big.rows', primary_key: ['id'] });
      const file = path.join(dir, 'rows.csv');
      assert.match(
        await run(['export', 'in.c-big.rows', '--output', file]),
        /^Exported 12,000 rows of table in\.c-big\.rows to .*rows\.csv \(manifest .*rows\.csv\.manifest\)\.\n$/,
      );
      assert.equal(await readFile(file, 'utf8'), csv([['id', 'value'], ...data]));
      const manifest = JSON.parse(await readFile(`${file}.manifest`, 'utf8'));
      assert.deepEqual(Object.keys(manifest), [
        'id',
        'name',
        'columns',
        'primary_key',
        'rows_count',
        'created',
        'last_import_date',
        'last_change_date',
      ]);
      assert.deepEqual(
        { ...manifest, created: 0, last_import_date: 0, last_change_date: 0 },
        {
          id: 'in.c-big.rows',
          name: 'rows',
          columns: ['id', 'value'],
          primary_key: ['id'],
          rows_count: count,
          created: 0,
          last_import_date: 0,
          last_change_date: 0,
        },
      );

      // an existing file is kept without --force; replaced with it
      await writeFile(file, 'mine');
      assert.match(
        await fails(['export', 'in.c-big.rows', '--output', file, '--columns', 'id']),
        /rows\.csv exists already: add --force to replace it/,
      );
      assert.equal(await readFile(file, 'utf8'), 'mine');
      await run([
        'export',
        'in.c-big.rows',
        '--output',
        file,
        '--columns',
        'value,id',
        '--where-column',
        'id',
        '--where-values',
        '3,1',
        '--force',
      ]);
      assert.equal(await readFile(file, 'utf8'), '"value","id"\n"v1","1"\n"v3","3"\n');
      assert.deepEqual(JSON.parse(await readFile(`${file}.manifest`, 'utf8')).columns, ['value', 'id']);

      // failures leave nothing behind: an unknown column, a missing folder
      const failed = path.join(dir, 'failed.csv');
      assert.match(
        await fails(['export', 'in.c-big.rows', '--output', failed, '--columns', 'nope']),
        /has no column nope/,
      );
      assert.match(
        await fails(['export', 'in.c-big.rows', '--output', path.join(dir, 'missing', 'x.csv')]),
        /Cannot write .*x\.csv: the folder .*missing does not exist; create it first or name another --output/,
      );
      assert.match(
        await fails(['export', 'in.c-big.rows', '--output', file, '--limit', 'abc', '--force']),
        /--limit takes a whole number of rows from 0, got "abc"/,
      );
      assert.deepEqual((await readdir(dir)).filter((f) => !f.startsWith('load')).sort(), [
        'rows.csv',
        'rows.csv.manifest',
      ]);

      // "-": the CSV to stdout, no manifest; the default file is named after the table, here
      assert.equal(
        await run(['export', 'in.c-big.rows', '--output', '-', '--limit', '2']),
        '"id","value"\n"0","quote ""0""\nline"\n"1","v1"\n',
      );
      await run(['export', 'in.c-big.rows', '--limit', '1']);
      assert.equal(
        await readFile(path.join(dir, 'in.c-big.rows.csv'), 'utf8'),
        '"id","value"\n"0","quote ""0""\nline"\n',
      );
      assert.ok(existsSync(path.join(dir, 'in.c-big.rows.csv.manifest')));
    });

    it('delete: a table; a bucket only with --force when it has tables; JSON says what went', async () => {
      await load(csv([['id'], ['1']]), { destination: 'in.c-shop.a' });
      await load(csv([['id'], ['1']]), { destination: 'in.c-shop.b' });
      await load(csv([['id'], ['1']]), { destination: 'in.c-empty.c' });
      assert.equal(await run(['delete', 'in.c-shop.a']), 'Deleted table in.c-shop.a.\n');
      assert.match(await fails(['delete', 'in.c-shop.a']), /Table in\.c-shop\.a does not exist in this project/);
      assert.match(
        await fails(['delete', '--bucket', 'in.c-shop']),
        /Bucket in\.c-shop has 1 table \(in\.c-shop\.b\): add --force to delete the bucket with them/,
      );
      assert.match(await fails(['delete']), /Name what to delete: a table id, or --bucket <bucket-id>/);
      assert.match(await fails(['delete', 'in.c-shop.b', '--bucket', 'in.c-shop']), /Name what to delete/);
      assert.deepEqual(await cli.json(['tables', 'delete', '--bucket', 'in.c-shop', '--force']), {
        tables: ['in.c-shop.b'],
        bucket: 'in.c-shop',
      });
      await run(['delete', 'in.c-empty.c']);
      assert.equal(await run(['delete', '--bucket', 'in.c-empty']), 'Deleted bucket in.c-empty.\n');
      assert.match(
        await fails(['delete', '--bucket', 'in.c-empty']),
        /Bucket in\.c-empty does not exist in this project/,
      );
      assert.deepEqual(await cli.json(['tables', 'list']), []);
    });

    it('a project sees only its own tables (--project)', async () => {
      await load(csv([['id'], ['secret']]), { destination: 'in.c-shop.users' });
      await load(csv([['id'], ['mine']]), { destination: 'in.c-other.t' }, 'other');
      assert.deepEqual(
        (await cli.json(['tables', 'list', '--project', 'other'])).map((t: { id: string }) => t.id),
        ['in.c-other.t'],
      );
      assert.match(
        await fails(['preview', 'in.c-shop.users', '--project', 'other']),
        /Table in\.c-shop\.users does not exist in this project/,
      );
      assert.match(
        await fails(['delete', '--bucket', 'in.c-shop', '--force', '--project', 'other']),
        /Bucket in\.c-shop does not exist in this project/,
      );
      assert.deepEqual((await cli.json(['tables', 'preview', 'in.c-shop.users'])).rows, [['secret']]);
    });
  });
}
