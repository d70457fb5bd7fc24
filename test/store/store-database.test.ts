import assert from 'node:assert/strict';
import { migrate, MIGRATIONS } from '../../src/store/sql/migrations.js';
import { openDatabase } from '../../src/store/open-store.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { runGex } from '../support/cli.js';
import { storeBackends, TEST_KEY, type FreshStore } from '../support/store.js';

const LATEST = MIGRATIONS[MIGRATIONS.length - 1].version;

/** The store's database itself, on every backend: migrations, the master key check, racing first starts. */
for (const factory of storeBackends()) {
  describe(`store database (${factory.name})`, () => {
    let store: FreshStore;
    beforeEach(async () => {
      store = await factory.fresh();
    });
    afterEach(() => store.dispose());

    async function appliedVersions(): Promise<number[]> {
      const db = await openDatabase(store.location, TEST_KEY);
      try {
        return (await db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map(
          (r) => r.version,
        );
      } finally {
        await db.close();
      }
    }

    it('upgrades a database of an older schema version in place, keeping its data', async () => {
      const db = await openDatabase(store.location, TEST_KEY);
      try {
        assert.deepEqual(await migrate(db, { upTo: 1 }), [1]);
        await db.run("INSERT INTO projects (id, name, created) VALUES (7, 'legacy', '2024-01-01T00:00:00+0000')");
        await db.run("INSERT INTO sequences (name, value) VALUES ('project', 7)");
      } finally {
        await db.close();
      }
      const backend = await openEmbeddedStore(store.location, TEST_KEY);
      try {
        const { info } = await backend.createToken({ description: 'after upgrade', project: 'legacy' });
        assert.equal(info.projectId, 7, 'the existing project is kept');
      } finally {
        await backend.close();
      }
      assert.deepEqual(
        await appliedVersions(),
        Array.from({ length: LATEST }, (_, i) => i + 1),
      );
    });

    it('applies nothing twice when opened again', async () => {
      await (await openEmbeddedStore(store.location, TEST_KEY)).close();
      const db = await openDatabase(store.location, TEST_KEY);
      try {
        assert.deepEqual(await migrate(db), []);
      } finally {
        await db.close();
      }
      assert.equal((await appliedVersions()).length, LATEST);
    });

    it("refuses a process whose master key is not the store's", async () => {
      await (await openEmbeddedStore(store.location, TEST_KEY)).close();
      await assert.rejects(
        openEmbeddedStore(store.location, { GEX_MASTER_KEY: '22'.repeat(32) }),
        /master key from GEX_MASTER_KEY is not the key of this store/,
      );
      await (await openEmbeddedStore(store.location, TEST_KEY)).close();
    });

    if (factory.name === 'PostgreSQL') {
      it('pools migrating one fresh database at once apply each migration once (the advisory lock)', async () => {
        const dbs = await Promise.all(Array.from({ length: 6 }, () => openDatabase(store.location, TEST_KEY)));
        try {
          const ran = await Promise.all(dbs.map((db) => migrate(db)));
          assert.deepEqual(
            ran.flat().sort((a, b) => a - b),
            Array.from({ length: LATEST }, (_, i) => i + 1),
          );
        } finally {
          await Promise.all(dbs.map((db) => db.close()));
        }
      });
    }

    it('processes starting together on a fresh store migrate it once and create one project', async function () {
      this.timeout(30_000);
      const runs = await Promise.all(
        Array.from({ length: 3 }, (_, i) =>
          runGex(['tokens', 'create', '--description', `racer ${i}`, '--store', store.location], TEST_KEY),
        ),
      );
      for (const run of runs) assert.equal(run.code, 0, run.stderr);
      assert.equal(
        new Set(runs.map((r) => r.stdout.trim().split('-')[0])).size,
        1,
        'every token is of the same project',
      );
      assert.deepEqual(
        await appliedVersions(),
        Array.from({ length: LATEST }, (_, i) => i + 1),
      );
    });
  });
}
