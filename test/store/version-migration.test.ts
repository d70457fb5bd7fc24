import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringifyExact, type JsonValue } from '../../src/json/index.js';
import type { ConfigStore } from '../../src/store/config-store.js';
import { openDatabase } from '../../src/store/open-store.js';
import { migrate } from '../../src/store/sql/migrations.js';
import type { Database } from '../../src/store/sql/database.js';
import {
  configurationToWire,
  rowVersionToWire,
  versionDetailToWire,
  versionItemToWire,
} from '../../src/store/wire/configurations.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { storeBackends, TEST_KEY, type FreshStore } from '../support/store.js';

const C = 'ex-generic-v2';
const FIXTURE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/fixtures/legacy-store/store-v4.json',
);

interface Expected {
  versions: unknown[];
  details: Record<string, unknown>;
  current: unknown;
  rowVersions: Record<string, unknown[]>;
}

interface Fixture {
  schemaVersion: number;
  tables: Record<string, Array<Record<string, string | number | null>>>;
  expected: Record<string, Expected>;
}

const plain = (v: JsonValue): unknown => JSON.parse(stringifyExact(v));

/** Parents before children (foreign keys). */
const TABLE_ORDER = [
  'projects',
  'tokens',
  'sequences',
  'store_settings',
  'configurations',
  'configuration_rows',
  'row_versions',
  'configuration_versions',
  'configuration_metadata',
];

/** A store at schema 4 holding the fixture's rows, as gex wrote them before migration 6. */
async function legacyStore(
  location: string,
  fixture: Fixture,
  change?: (tables: Fixture['tables']) => void,
): Promise<void> {
  const tables = structuredClone(fixture.tables);
  change?.(tables);
  const db = await openDatabase(location, TEST_KEY);
  try {
    await migrate(db, { upTo: fixture.schemaVersion });
    for (const table of TABLE_ORDER) {
      for (const row of tables[table] ?? []) {
        const columns = Object.keys(row);
        await db.run(
          `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          Object.values(row),
        );
      }
    }
  } finally {
    await db.close();
  }
}

async function withDatabase<T>(location: string, work: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(location, TEST_KEY);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

for (const factory of storeBackends()) {
  describe(`store migration 6: versions share their rows (${factory.name})`, () => {
    let fixture: Fixture;
    let store: FreshStore;
    before(async () => {
      fixture = JSON.parse(await readFile(FIXTURE, 'utf8')) as Fixture;
    });
    beforeEach(async () => {
      store = await factory.fresh();
    });
    afterEach(() => store.dispose());

    async function opened<T>(work: (s: ConfigStore) => Promise<T>): Promise<T> {
      const backend = await openEmbeddedStore(store.location, TEST_KEY);
      try {
        return await work(await backend.localSession());
      } finally {
        await backend.close();
      }
    }

    it('opens a store written before it with every version, version list and row version answering as before', async () => {
      await legacyStore(store.location, fixture);
      await opened(async (s) => {
        for (const [id, expected] of Object.entries(fixture.expected)) {
          const items = await s.listConfigurationVersions(C, id, { include: ['name', 'description', 'configuration'] });
          assert.deepEqual(
            items.map((v) => plain(versionItemToWire(v))),
            expected.versions,
            `${id}: version list`,
          );
          for (const [v, detail] of Object.entries(expected.details)) {
            assert.deepEqual(
              plain(versionDetailToWire(await s.getConfigurationVersion(C, id, Number(v)))),
              detail,
              `${id}: version ${v}`,
            );
          }
          assert.deepEqual(
            plain(configurationToWire(await s.getConfiguration(C, id))),
            expected.current,
            `${id}: the configuration`,
          );
          for (const [rowId, versions] of Object.entries(expected.rowVersions)) {
            assert.deepEqual(
              (await s.listRowVersions(C, id, rowId)).map((v) => plain(rowVersionToWire(v))),
              versions,
              `${id}: versions of row ${rowId}`,
            );
          }
        }
      });
      await withDatabase(store.location, async (db) => {
        await assert.rejects(
          db.get('SELECT rows FROM configuration_versions'),
          'the per-version row lists are dropped',
        );
      });
    });

    it('goes on from the migrated history: a row change, a rollback to and a copy of a migrated version', async () => {
      await legacyStore(store.location, fixture);
      await opened(async (s) => {
        const last = (await s.listConfigurationVersions(C, 'legacy', { limit: 1 }))[0].version;
        const previous = await s.getConfigurationVersion(C, 'legacy', last);
        const changed = previous.rows[0].id;
        await s.updateRow(C, 'legacy', changed, { name: 'after the migration' });
        const next = await s.getConfigurationVersion(C, 'legacy', last + 1);
        assert.deepEqual(
          next.rows.map((r) => [r.id, r.id === changed ? 'after the migration' : r.name]),
          previous.rows.map((r) => [r.id, r.id === changed ? 'after the migration' : r.name]),
        );
        assert.deepEqual(next.rowsSortOrder, previous.rowsSortOrder);
        // version 6 set a custom order, 7 appended a row to it
        const target = await s.getConfigurationVersion(C, 'legacy', 7);
        assert.deepEqual(target.rowsSortOrder, ['r3', 'r1', 'r2', 'r4']);
        const { version } = await s.rollbackConfiguration(C, 'legacy', 7);
        const rolledBack = await s.getConfigurationVersion(C, 'legacy', version);
        const content = (v: typeof target) =>
          v.rows.map((r) => [r.id, r.name, r.description, r.isDisabled, stringifyExact(r.configuration)]);
        assert.deepEqual(content(rolledBack), content(target));
        assert.deepEqual(rolledBack.rowsSortOrder, target.rowsSortOrder);
        const copy = await s.copyConfiguration(C, 'legacy', 7, { name: 'copy of 7' });
        assert.deepEqual(content(await s.getConfigurationVersion(C, copy.id, 1)), content(target));
        assert.deepEqual(
          (await s.getConfigurationVersion(C, 'legacy', 7)).rows.map((r) => r.versionIdentifier),
          target.rows.map((r) => r.versionIdentifier),
          'the migrated version is unchanged by what came after',
        );
      });
    });

    it('refuses a store whose row list of a version cannot be read, naming it, and leaves the store as it was', async () => {
      await legacyStore(store.location, fixture, (tables) => {
        const v3 = tables.configuration_versions.find((v) => v.configuration_id === 'legacy' && v.version === 3)!;
        v3.rows = '[{"id": "r1", "version": "one"}]';
      });
      await assert.rejects(
        openEmbeddedStore(store.location, TEST_KEY),
        /Cannot migrate the store: version 3 of configuration "legacy" \(component "ex-generic-v2"\) has a row list entry without a string id and an integer version\. The store is unchanged/,
      );
      await withDatabase(store.location, async (db) => {
        // the migrations before this one applied (token management, 5); this one not
        assert.deepEqual(await db.get('SELECT max(version) AS v FROM schema_migrations'), { v: 5 });
        assert.ok(
          await db.get('SELECT rows FROM configuration_versions WHERE version = 3'),
          'the row lists are still there',
        );
      });
    });
  });
}
