import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localToken } from '../../../src/store/embedded/tokens.js';
import { fromPlain } from '../../../src/json/index.js';
import { migrate, MIGRATIONS, tablesCreatedBy } from '../../../src/store/sql/migrations.js';
import { chooseStoreSchema, firstSearchPathEntry, withSearchPath } from '../../../src/store/sql/store-schema.js';
import { openDatabase } from '../../../src/store/open-store.js';
import { ProjectTables } from '../../../src/store/tables/index.js';
import { runGex } from '../../support/cli.js';
import { openEmbeddedStore } from '../../support/open-store.js';
import { inSchema, POSTGRES_VARIABLE, postgresBackend, TEST_KEY, withPostgresClient } from '../../support/store.js';

describe('store schema: which schema a PostgreSQL store keeps its own tables in', () => {
  it('reads the first entry of a search_path as PostgreSQL does', () => {
    assert.equal(firstSearchPathEntry('"$user", public'), '$user');
    assert.equal(firstSearchPathEntry('public'), 'public');
    assert.equal(firstSearchPathEntry(' MyStore , public'), 'mystore', 'unquoted names are folded');
    assert.equal(firstSearchPathEntry('"My ""odd"", store", public'), 'My "odd", store');
    assert.equal(firstSearchPathEntry(''), null);
    assert.equal(firstSearchPathEntry('"unclosed'), null);
  });

  it("keeps a schema the URL selects, else the one it names, else gex — never public or PostgreSQL's", () => {
    assert.deepEqual(chooseStoreSchema('public', '"$user", public'), { name: 'gex', legacy: 'public' });
    assert.deepEqual(chooseStoreSchema(null, '"$user", public'), { name: 'gex', legacy: null });
    assert.deepEqual(chooseStoreSchema('public', 'public'), { name: 'gex', legacy: 'public' });
    assert.deepEqual(chooseStoreSchema('tenant_a', 'tenant_a'), { name: 'tenant_a', legacy: 'tenant_a' });
    // the role's own schema ("$user") when it exists: where an older gex kept the store too
    assert.deepEqual(chooseStoreSchema('alice', '"$user", public'), { name: 'alice', legacy: 'alice' });
    // a named schema that does not exist yet: created for the store
    assert.deepEqual(chooseStoreSchema(null, 'not_yet'), { name: 'not_yet', legacy: null });
    assert.deepEqual(chooseStoreSchema('public', 'not_yet, public'), { name: 'not_yet', legacy: 'public' });
    assert.deepEqual(chooseStoreSchema('pg_catalog', 'pg_catalog'), { name: 'gex', legacy: 'pg_catalog' });
    assert.deepEqual(chooseStoreSchema(null, 'information_schema'), { name: 'gex', legacy: null });
  });

  it("sets the search_path at connection start through the URL's options, after any the URL or PGOPTIONS has", () => {
    const options = (url: string) => new URL(url).searchParams.get('options');
    assert.equal(options(withSearchPath('postgres://u:p%40ss@h:5432/db', 'gex')), '-c search_path="gex"');
    assert.equal(
      options(withSearchPath('postgres://h/db?options=-c%20search_path%3Dt1&sslmode=disable', 't1')),
      '-c search_path=t1 -c search_path="t1"',
    );
    assert.equal(
      options(withSearchPath('postgres://h/db', 'My Store\\x"y', '-c work_mem=8MB')),
      '-c work_mem=8MB -c search_path="My\\ Store\\\\x""y"',
    );
    assert.equal(new URL(withSearchPath('postgres://u:p%40ss@h:5432/db?sslmode=disable', 'gex')).password, 'p%40ss');
    assert.equal(
      new URL(withSearchPath('postgres://h/db?sslmode=disable', 'gex')).searchParams.get('sslmode'),
      'disable',
    );
  });

  it('knows the tables of every migration (what moves with a store)', () => {
    assert.deepEqual(tablesCreatedBy(2), ['store_settings']);
    assert.deepEqual(tablesCreatedBy(3), ['storage_buckets', 'storage_tables']);
    assert.ok(tablesCreatedBy(1).includes('tokens') && tablesCreatedBy(1).includes('configuration_metadata'));
  });
});

const backend = postgresBackend();
const ownTables = () => ['schema_migrations', ...MIGRATIONS.flatMap((m) => tablesCreatedBy(m.version))].sort();

/** Relations of `schema` (tables, views, sequences…; not indexes), sorted. */
async function relations(url: string, schema: string): Promise<string[]> {
  return withPostgresClient(url, async (c) => {
    const { rows } = await c.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind NOT IN ('i', 'I') ORDER BY 1`,
      [schema],
    );
    return rows.map((r) => r.name);
  });
}

const schemaExists = (url: string, schema: string) =>
  withPostgresClient(
    url,
    async (c) => (await c.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1,
  );

if (!backend) {
  describe('store schema on PostgreSQL', () => {
    it(`is SKIPPED: ${POSTGRES_VARIABLE} is not set`, function () {
      this.skip();
    });
  });
} else {
  /**
   * These tests need `public` of a database of their own (a store of the older layout lives there),
   * so each gets a fresh database on the test server, dropped afterwards.
   */
  describe('store schema on PostgreSQL (a database per test)', function () {
    this.timeout(120_000);
    const serverUrl = process.env[POSTGRES_VARIABLE]!.trim();
    let url: string;
    let database: string;
    let dir: string;

    beforeEach(async () => {
      database = `gex_layout_${process.pid}_${randomBytes(4).toString('hex')}`;
      await withPostgresClient(serverUrl, (c) => c.query(`CREATE DATABASE ${database}`));
      const u = new URL(serverUrl);
      u.pathname = `/${database}`;
      url = u.toString();
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-store-schema-'));
    });
    afterEach(async () => {
      await withPostgresClient(serverUrl, (c) => c.query(`DROP DATABASE ${database} WITH (FORCE)`));
      await rm(dir, { recursive: true, force: true });
    });

    /** A store at `location` with a token, a configuration and a loaded table. */
    async function fill(location: string): Promise<string> {
      const store = await openEmbeddedStore(location, TEST_KEY);
      try {
        const { token } = await store.createToken({ description: 'kept', project: 'shop' });
        const info = (await store.authenticate(token))!;
        await store.session(info).createConfiguration('ex-generic-v2', {
          name: 'kept',
          configurationId: 'kept',
          configuration: fromPlain({ parameters: { a: 1 } }),
        });
        const file = path.join(dir, 'users.csv');
        await writeFile(file, '"id","name"\n"1","Ann"\n"2","Bob"\n');
        await store.tables(info).load(file, { destination: 'in.c-shop.users', primary_key: ['id'] });
        return token;
      } finally {
        await store.close();
      }
    }

    it('a store on a plain URL keeps every table of its own in schema gex, none in public; buckets in their schemas', async () => {
      await fill(url);
      assert.deepEqual(
        await relations(url, 'gex'),
        ownTables(),
        'every relation a migrated store has is one the layout knows (and moves)',
      );
      assert.deepEqual(await relations(url, 'public'), []);
      assert.deepEqual(await relations(url, 'in.c-shop'), ['users']);
    });

    it('moves a store of the older layout (its tables in public) into gex in place, once, with all its data, while processes open it together', async () => {
      const token = await fill(url);
      // the older layout: the same tables, in public (what every gex before this change created)
      await withPostgresClient(url, async (c) => {
        for (const table of await relations(url, 'gex')) await c.query(`ALTER TABLE gex.${table} SET SCHEMA public`);
        await c.query('DROP SCHEMA gex');
        await c.query('CREATE TABLE public.my_own_data (x int)'); // not gex's: stays
      });
      assert.deepEqual(await relations(url, 'public'), [...ownTables(), 'my_own_data'].sort());

      // a read-only command finds the store where it was, and opening moves it
      const list = await runGex(['tables', 'list', '--store', url, '--project', 'shop'], TEST_KEY);
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, /in\.c-shop\.users/);
      assert.deepEqual(await relations(url, 'public'), ['my_own_data']);
      assert.deepEqual(await relations(url, 'gex'), ownTables());

      // moved back, then four processes' pools open it at once: one moves it, none fails
      await withPostgresClient(url, async (c) => {
        for (const table of ownTables()) await c.query(`ALTER TABLE gex.${table} SET SCHEMA public`);
        await c.query('DROP SCHEMA gex');
      });
      const stores = await Promise.all(Array.from({ length: 4 }, () => openEmbeddedStore(url, TEST_KEY)));
      await Promise.all(stores.map((s) => s.close()));
      assert.deepEqual(await relations(url, 'public'), ['my_own_data']);
      assert.deepEqual(await relations(url, 'gex'), ownTables());

      const store = await openEmbeddedStore(url, TEST_KEY);
      try {
        const info = await store.authenticate(token);
        assert.ok(info, 'the token still authenticates');
        assert.equal((await store.session(info).getConfiguration('ex-generic-v2', 'kept')).name, 'kept');
        const tables = store.tables(info);
        assert.deepEqual((await tables.preview('in.c-shop.users')).rows, [
          ['1', 'Ann'],
          ['2', 'Bob'],
        ]);
        // a table of the older layout takes new columns, reserved names too, and upserts by its key
        const file = path.join(dir, 'more.csv');
        await writeFile(file, '"id","name","xmin","ctid"\n"2","Bobby","b1","b2"\n"3","Cid","c1","c2"\n');
        await tables.load(file, { destination: 'in.c-shop.users', incremental: true, primary_key: ['id'] });
        assert.deepEqual(await tables.preview('in.c-shop.users'), {
          columns: ['id', 'name', 'xmin', 'ctid'],
          rows: [
            ['1', 'Ann', '', ''],
            ['2', 'Bobby', 'b1', 'b2'],
            ['3', 'Cid', 'c1', 'c2'],
          ],
        });
        assert.deepEqual(await migrate(store.db), [], 'opened again: nothing to apply, nothing moved');
      } finally {
        await store.close();
      }
      assert.deepEqual(await relations(url, 'public'), ['my_own_data']);
    });

    it("leaves another tool's tables in public alone (a schema_migrations that is not gex's)", async () => {
      await withPostgresClient(url, async (c) => {
        await c.query('CREATE TABLE public.schema_migrations (version varchar PRIMARY KEY)');
        await c.query('CREATE TABLE public.projects (id int)');
      });
      await fill(url);
      assert.deepEqual(await relations(url, 'public'), ['projects', 'schema_migrations']);
      assert.deepEqual(await relations(url, 'gex'), ownTables());
    });

    it('a URL whose search_path names its own schema keeps the store there (created when missing); no gex schema', async () => {
      const tenants = ['tenant_a', 'Tenant_B', 'Tenant C'];
      await withPostgresClient(url, (c) => c.query('CREATE SCHEMA tenant_a'));
      for (const tenant of tenants) {
        const location = inSchema(url, `"${tenant.replaceAll(' ', '\\ ')}"`); // a space in an option is escaped
        await fill(location);
        const db = await openDatabase(location, TEST_KEY);
        try {
          assert.deepEqual(await db.storeSchema!(), { name: tenant, legacy: tenant });
        } finally {
          await db.close();
        }
        assert.deepEqual(await relations(url, tenant), ownTables());
        const store = await openEmbeddedStore(location, TEST_KEY);
        try {
          const tables = new ProjectTables(store.db, (await localToken(store.db, 'shop')).projectId);
          assert.deepEqual(
            (await tables.listTables()).map((t) => t.id),
            ['in.c-shop.users'],
          );
          await tables.deleteBucket('in.c-shop');
        } finally {
          await store.close();
        }
      }
      assert.equal(await schemaExists(url, 'gex'), false);
      assert.deepEqual(await relations(url, 'public'), []);
    });
  });
}
