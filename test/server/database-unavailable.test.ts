import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/server/app.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { DatabaseUnavailable } from '../../src/store/sql/database.js';
import { PostgresDatabase } from '../../src/store/sql/postgres-database.js';
import { call } from '../support/serve-cluster.js';
import { postgresBackend, TEST_KEY, type FreshStore } from '../support/store.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';
const postgres = postgresBackend();

/**
 * The database goes away under a running server (its connections are cut and new ones refused)
 * and comes back: meanwhile every request gets 503 storage.databaseUnavailable, nothing is
 * changed, and the server answers normally again once the database is reachable.
 */
if (postgres) {
  describe('server: PostgreSQL unavailable and back', () => {
    let store: FreshStore;
    let proxy: TcpProxy;
    let backend: EmbeddedBackend;
    let app: FastifyInstance;
    let url: string;
    let token: string;
    let proxied: string;

    before(async () => {
      store = await postgres.fresh();
      const direct = new URL(store.location);
      proxy = await TcpProxy.start({ host: direct.hostname, port: Number(direct.port || 5432) });
      direct.host = `127.0.0.1:${proxy.port}`;
      proxied = direct.toString();
      backend = await openEmbeddedStore(proxied, { ...TEST_KEY, GEX_PG_CONNECT_TIMEOUT_MS: '2000' });
      token = (await backend.createToken({ description: 'outage' })).token;
      app = await buildServer({ backend });
      url = await app.listen({ port: 0, host: '127.0.0.1' });
    });
    after(async () => {
      await app?.close();
      await backend?.close();
      await proxy?.cut();
      await store?.dispose();
    });

    it('answers 503 with Retry-After while the database is down and recovers when it is back', async () => {
      const created = await call(url, token, 'POST', CONFIGS, { name: 'Before', configurationId: 'outage' });
      assert.equal(created.status, 201);

      await proxy.cut();
      for (const [method, path, body] of [
        ['GET', `${CONFIGS}/outage`],
        ['PUT', `${CONFIGS}/outage`, { name: 'During' }],
        ['GET', '/v2/storage/tokens/verify'],
      ] as const) {
        const response = await fetch(url + path, {
          method,
          headers: { 'X-StorageApi-Token': token, 'content-type': 'application/json' },
          body: body && JSON.stringify(body),
        });
        assert.equal(response.status, 503, `${method} ${path}`);
        assert.equal(response.headers.get('retry-after'), '5');
        const error = (await response.json()) as {
          error: string;
          code: string;
          status: string;
          exceptionId: string;
          gexCode: string;
        };
        assert.equal(error.code, 'storage.databaseUnavailable');
        assert.equal(error.gexCode, 'GEX_STORE_UNAVAILABLE');
        assert.equal(error.status, 'error');
        assert.match(error.error, /database unavailable/);
        assert.match(error.exceptionId, /^exception-/);
      }

      await proxy.resume();
      const recovered = await call(url, token, 'GET', `${CONFIGS}/outage`);
      assert.equal(recovered.status, 200);
      assert.equal(recovered.body.name, 'Before', 'the update refused during the outage changed nothing');
      assert.equal(recovered.body.version, 1);
      const updated = await call(url, token, 'PUT', `${CONFIGS}/outage`, { name: 'After' });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.version, 2);
    });

    it('a connection lost inside a transaction fails it with DatabaseUnavailable, and the process lives on', async () => {
      const db = new PostgresDatabase(proxied, { label: 'the test database' });
      try {
        const transaction = db.transaction(async (tx) => {
          await tx.get('SELECT 1');
          await proxy.cut(); // the checked-out connection breaks between two statements
          await new Promise((resolve) => setTimeout(resolve, 50));
          return tx.get('SELECT 2');
        });
        await assert.rejects(transaction, (e: unknown) => {
          assert.ok(e instanceof DatabaseUnavailable, String(e));
          assert.match(e.message, /^Storage database unavailable \(the test database\): (?!Storage)/, 'wrapped once');
          return true;
        });
        await proxy.resume();
        assert.deepEqual(await db.get('SELECT 3 AS n'), { n: 3 }, 'the pool connects again');
      } finally {
        await db.close();
      }
    });
  });
}
