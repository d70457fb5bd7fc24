import assert from 'node:assert/strict';
import {
  bossSchemaOf,
  messageIdOf,
  notifyChannelOf,
  PgBossDispatch,
} from '../../src/jobs/dispatch/pg-boss-dispatch.js';
import { JobLocks } from '../../src/store/sql/advisory-locks.js';
import type { PostgresDatabase } from '../../src/store/sql/postgres-database.js';
import { postgresBackend, withPostgresClient } from '../support/store.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('job dispatch through pg-boss: names, ids, locks', () => {
  it('names pg-boss schema and channel from the store schema, safely for any schema name', () => {
    assert.equal(bossSchemaOf('gex'), 'gex_pgboss');
    for (const hostile of ['Gex', 'a"; DROP SCHEMA gex; --', 'x'.repeat(60), 'ünï']) {
      assert.match(bossSchemaOf(hostile), /^gex_pgboss_[0-9a-f]{16}$/);
      assert.match(notifyChannelOf(hostile), /^gex_jobs_[0-9a-f]{16}$/);
    }
    assert.notEqual(bossSchemaOf('A'), bossSchemaOf('B'));
  });

  it('gives each attempt of each job one message id, shaped as a UUID', () => {
    const id = messageIdOf('gex', { id: 7, attempt: 1 });
    assert.match(id, UUID);
    assert.equal(messageIdOf('gex', { id: 7, attempt: 1 }), id, 'the same dispatch is the same message');
    assert.notEqual(messageIdOf('gex', { id: 7, attempt: 2 }), id, 'a retry is a new message');
    assert.notEqual(messageIdOf('other', { id: 7, attempt: 1 }), id, 'another store is another message');
  });

  const backend = postgresBackend();
  if (!backend) return;

  describe('on PostgreSQL', function () {
    this.timeout(60_000);
    let opened: Awaited<ReturnType<typeof backend.open>>;
    let db: PostgresDatabase;
    beforeEach(async () => {
      opened = await backend.open();
      db = opened.backend.db as PostgresDatabase;
    });
    afterEach(() => opened.dispose());

    it('a job sent twice is one message, handed out once; one not handled now is handed out again', async () => {
      const dispatch = new PgBossDispatch(db, { supervise: false, onError: (e) => assert.fail(e) });
      try {
        await dispatch.send([{ id: 1, attempt: 1 }]);
        await dispatch.send([
          { id: 1, attempt: 1 },
          { id: 2, attempt: 1 },
        ]);
        const first = await dispatch.fetch(10);
        assert.deepEqual(first.map((h) => [h.id, h.attempt]).sort(), [
          [1, 1],
          [2, 1],
        ]);
        assert.deepEqual(await dispatch.fetch(10), [], 'each message to one fetcher');
        await dispatch.done(first[0].messageId);
        await dispatch.later(first[1].messageId);
        const schema = bossSchemaOf((await db.storeSchema()).name);
        const states = await withPostgresClient(db.connectionString, (c) =>
          c.query<{ id: string; state: string }>(`SELECT id, state::text AS state FROM ${schema}.job ORDER BY 2`),
        );
        assert.deepEqual(
          states.rows.map((r) => r.state),
          ['completed', 'retry'],
        );
      } finally {
        await dispatch.stop();
      }
    });

    it('jobs sent together are messages like one sent alone (expiry, retries) and wake the listening workers', async () => {
      const dispatch = new PgBossDispatch(db, { supervise: false, onError: (e) => assert.fail(e) });
      const listener = await db.openSession('test listener', () => undefined);
      try {
        let woken = 0;
        listener.on('notification', () => woken++);
        await listener.query(`LISTEN ${await dispatch.channel()}`);
        await dispatch.send([{ id: 1, attempt: 1 }]);
        await dispatch.send([
          { id: 2, attempt: 1 },
          { id: 3, attempt: 2 },
        ]);
        const deadline = Date.now() + 5000;
        while (woken < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(woken, 2, 'each send woke the listener');
        const schema = bossSchemaOf((await db.storeSchema()).name);
        const rows = await withPostgresClient(db.connectionString, (c) =>
          c.query<{ id: string; data: { jobId: number; attempt: number }; retry_limit: number; expire: number }>(
            `SELECT id, data, retry_limit, extract(epoch FROM expire_in)::int AS expire FROM ${schema}.job ORDER BY data->>'jobId'`,
          ),
        );
        const store = (await db.storeSchema()).name;
        assert.deepEqual(
          rows.rows.map((r) => [r.id, r.data, r.retry_limit, r.expire]),
          [
            [messageIdOf(store, { id: 1, attempt: 1 }), { jobId: 1, attempt: 1 }, 100, 30],
            [messageIdOf(store, { id: 2, attempt: 1 }), { jobId: 2, attempt: 1 }, 100, 30],
            [messageIdOf(store, { id: 3, attempt: 2 }), { jobId: 3, attempt: 2 }, 100, 30],
          ],
        );
      } finally {
        await listener.end();
        await dispatch.stop();
      }
    });

    it("a job's lock tells whether its worker's session lives", async () => {
      const worker = new JobLocks(db, 'worker', () => undefined);
      const monitor = new JobLocks(db, 'job monitor', () => undefined);
      try {
        assert.equal(await worker.lock(42), true);
        assert.equal(await monitor.takeIfOrphaned(42), false, 'held by a live session');
        await worker.close(); // what kill -9 does to the session
        assert.equal(await monitor.takeIfOrphaned(42), true, 'no holder: the worker is gone');
        const another = new JobLocks(db, 'worker', () => undefined);
        assert.equal(await another.lock(42), false, 'the monitor holds it while it ends the job');
        await monitor.unlock(42);
        assert.equal(await another.lock(42), true);
        await another.close();
      } finally {
        await worker.close();
        await monitor.close();
      }
    });
  });
});
