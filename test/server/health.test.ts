import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildServer } from '../../src/server/app.js';
import type { ServerBackend } from '../../src/server/backend.js';
import { healthRoute } from '../../src/server/operations/health.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { postgresBackend, sqliteBackend, TEST_KEY } from '../support/store.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const STORE_ERRORS = /^gex_store_errors_total\{code="storage\.(\w+)"\} (\d+)$/m;

describe('server: GET /health', () => {
  it('is 200 {"status":"ok"} while the SQLite store answers and 503 with a reason once the store is closed under the server; the failure is counted', async () => {
    const { backend, dispose } = await sqliteBackend.open();
    const app = await buildServer({ backend, metrics: true });
    try {
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const ok = await fetch(`${url}/health`);
      assert.equal(ok.status, 200);
      assert.deepEqual(await ok.json(), { status: 'ok' });
      assert.equal(ok.headers.get('cache-control'), 'no-store');

      await backend.close();
      const down = await fetch(`${url}/health`);
      assert.equal(down.status, 503);
      const body = (await down.json()) as { status: string; reason: string };
      assert.equal(body.status, 'unavailable');
      assert.equal(body.reason, "the store's database failed a health query");
      assert.ok(!JSON.stringify(body).includes('sqlite'), 'no file path for an anonymous caller');
      const metrics = await (await fetch(`${url}/metrics`)).text();
      assert.deepEqual(STORE_ERRORS.exec(metrics)?.slice(1), ['internalError', '1']);
    } finally {
      await app.close();
      await dispose().catch(() => undefined);
    }
  });

  it('answers 503 within its time limit when the database does not answer', async () => {
    const hanging = { ping: () => new Promise<void>(() => undefined) } as unknown as ServerBackend;
    const app: FastifyInstance = Fastify();
    healthRoute(app, hanging, { timeoutMs: 50 });
    try {
      const response = await app.inject({ method: 'GET', url: '/health' });
      assert.equal(response.statusCode, 503);
      assert.deepEqual(response.json(), {
        status: 'unavailable',
        reason: "the store's database did not answer within 0.05 s",
      });
    } finally {
      await app.close();
    }
  });

  const postgres = postgresBackend();
  if (postgres) {
    it('is 503 "cannot be reached" while PostgreSQL is unreachable and 200 again once it is back', async () => {
      const store = await postgres.fresh();
      const direct = new URL(store.location);
      const proxy = await TcpProxy.start({ host: direct.hostname, port: Number(direct.port || 5432) });
      direct.host = `127.0.0.1:${proxy.port}`;
      let backend: EmbeddedBackend | undefined;
      let app: FastifyInstance | undefined;
      try {
        backend = await openEmbeddedStore(direct.toString(), { ...TEST_KEY, GEX_PG_CONNECT_TIMEOUT_MS: '1000' });
        app = await buildServer({ backend, metrics: true });
        const url = await app.listen({ port: 0, host: '127.0.0.1' });
        assert.equal((await fetch(`${url}/health`)).status, 200);
        await proxy.cut();
        const down = await fetch(`${url}/health`);
        assert.equal(down.status, 503);
        assert.deepEqual(await down.json(), {
          status: 'unavailable',
          reason: "the store's database cannot be reached",
        });
        assert.deepEqual(STORE_ERRORS.exec(await (await fetch(`${url}/metrics`)).text())?.slice(1), [
          'databaseUnavailable',
          '1',
        ]);
        await proxy.resume();
        assert.equal((await fetch(`${url}/health`)).status, 200);
      } finally {
        await app?.close();
        await backend?.close();
        await proxy.cut();
        await store.dispose();
      }
    });
  }
});
