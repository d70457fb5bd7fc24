import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { openEmbeddedStore } from './open-store.js';

/** An empty store of one backend; `dispose` removes it. */
export interface FreshStore {
  /** what `--store` / `openEmbeddedStore` take: a SQLite file or a PostgreSQL URL */
  location: string;
  dispose(): Promise<void>;
}

export interface BackendFactory {
  name: 'SQLite' | 'PostgreSQL';
  /** a new, empty store location */
  fresh(): Promise<FreshStore>;
  /** a fresh store, opened (with TEST_KEY) */
  open(): Promise<{ backend: EmbeddedBackend; location: string; dispose(): Promise<void> }>;
}

export const TEST_KEY = { GEX_MASTER_KEY: '11'.repeat(32) };
export const POSTGRES_VARIABLE = 'GEX_TEST_POSTGRES';
export const POSTGRES_EXAMPLE = 'postgres://postgres@127.0.0.1:5432/test';

function withOpen(name: BackendFactory['name'], fresh: () => Promise<FreshStore>): BackendFactory {
  return {
    name,
    fresh,
    async open() {
      const store = await fresh();
      try {
        const backend = await openEmbeddedStore(store.location, TEST_KEY);
        return {
          backend,
          location: store.location,
          async dispose() {
            await backend.close();
            await store.dispose();
          },
        };
      } catch (error) {
        await store.dispose();
        throw error;
      }
    },
  };
}

export const sqliteBackend = withOpen('SQLite', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-store-'));
  return { location: path.join(dir, 'store.sqlite'), dispose: () => rm(dir, { recursive: true, force: true }) };
});

/** Runs admin statements (CREATE/DROP SCHEMA) on the test database. */
export async function withPostgresClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** `url` with every connection's search_path set to `schema`, so the store lives in it. */
export function inSchema(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

let schemaCount = 0;

/** Each PostgreSQL store is a schema of its own in the database at `url`, dropped afterwards. */
export function postgresBackendAt(url: string): BackendFactory {
  return withOpen('PostgreSQL', async () => {
    const schema = `gex_test_${process.pid}_${++schemaCount}_${randomBytes(3).toString('hex')}`;
    await withPostgresClient(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
    return {
      location: inSchema(url, schema),
      // pg-boss keeps a store's job dispatch in a schema beside it (src/jobs/dispatch)
      dispose: () =>
        withPostgresClient(url, (c) =>
          c.query(`DROP SCHEMA ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_pgboss CASCADE`),
        ).then(() => undefined),
    };
  });
}

let skipNoticeShown = false;

/** Says at the end of the run, where it is seen, that the PostgreSQL suite did not run. */
function announcePostgresSkipped(): void {
  if (skipNoticeShown) return;
  skipNoticeShown = true;
  after(() => {
    console.warn(
      `\n  !!! The PostgreSQL store suite was SKIPPED (${POSTGRES_VARIABLE} is not set): only SQLite was tested.\n` +
        `  !!! To run it: ${POSTGRES_VARIABLE}=${POSTGRES_EXAMPLE} npm test\n`,
    );
  });
}

/** The embedded backends the store and server suites run against: SQLite, and PostgreSQL when GEX_TEST_POSTGRES is set. */
export function storeBackends(): BackendFactory[] {
  const url = process.env[POSTGRES_VARIABLE]?.trim();
  if (!url) {
    announcePostgresSkipped();
    return [sqliteBackend];
  }
  return [sqliteBackend, postgresBackendAt(url)];
}

/** The PostgreSQL backend alone, or undefined without GEX_TEST_POSTGRES (the skip is announced). */
export function postgresBackend(): BackendFactory | undefined {
  return storeBackends().find((b) => b.name === 'PostgreSQL');
}
