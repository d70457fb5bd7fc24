import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pg from 'pg';
import { createLogger } from '../../src/common/logger.js';
import { appendJobEvents, JobEventLog } from '../../src/jobs/job-event-log.js';
import { JobLogMarker, jobLogChannel } from '../../src/jobs/job-log-marker.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import type { PostgresDatabase } from '../../src/store/sql/postgres-database.js';
import { postgresBackend, POSTGRES_VARIABLE } from '../support/store.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The marker's value once it differs from `from` (a notification arrives shortly after its commit). */
async function changed(marker: JobLogMarker, from: string | null, withinMs = 5000): Promise<string | null> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const now = await marker.marker();
    if (now !== from || Date.now() > deadline) return now;
    await sleep(20);
  }
}

const line = (message: string) => [{ created: new Date().toISOString(), level: 'info' as const, message }];

describe('the job-log marker on PostgreSQL (LISTEN/NOTIFY)', function () {
  this.timeout(60_000);
  const factory = postgresBackend();
  if (!factory) {
    it('needs PostgreSQL', function () {
      console.warn(`SKIPPED: the job-log marker tests need ${POSTGRES_VARIABLE}`);
      this.skip();
    });
    return;
  }
  let opened: Awaited<ReturnType<NonNullable<typeof factory>['open']>>;
  let backend: EmbeddedBackend;
  let db: PostgresDatabase;
  let clock: number;
  let warnings: string[];
  let marker: JobLogMarker;
  const job = { id: 7, projectId: 1 };

  beforeEach(async () => {
    opened = await factory.open();
    backend = opened.backend;
    db = backend.db as PostgresDatabase;
    clock = 1_000_000;
    warnings = [];
    const sink = () =>
      new Writable({
        write: (chunk: Buffer, _e, done) => {
          warnings.push(chunk.toString());
          done();
        },
      });
    const logger = createLogger({ level: 'warn', format: 'json', stdout: sink(), stderr: sink() });
    marker = new JobLogMarker({ db, logger, retryMs: 1000, now: () => clock });
  });
  afterEach(async () => {
    await marker.close();
    await opened.dispose();
  });

  it('stays while nothing is appended and changes once an append commits', async () => {
    const first = await marker.marker();
    assert.match(first ?? '', /^pg-log:[0-9a-f]{16}:0$/);
    await sleep(300);
    assert.equal(await marker.marker(), first, 'nothing appended: the same marker');
    await new JobEventLog(db).appendEvents(job, line('one'));
    const second = await changed(marker, first);
    assert.notEqual(second, first);
    assert.match(second ?? '', /^pg-log:[0-9a-f]{16}:[1-9]\d*$/);
    await sleep(300);
    assert.equal(await marker.marker(), second, 'stable again');
  });

  it('does not change for an append not yet committed, nor for one rolled back', async () => {
    const before = await marker.marker();
    assert.ok(before);
    const channel = await jobLogChannel(db);
    assert.ok(channel);
    await assert.rejects(
      db.transaction(async (tx) => {
        await appendJobEvents(tx, channel, job, line('rolled back'));
        throw new Error('roll back');
      }),
      /roll back/,
    );
    let during: string | null | undefined;
    await db.transaction(async (tx) => {
      await appendJobEvents(tx, channel, job, line('pending'));
      await sleep(300);
      during = await marker.marker();
    });
    assert.equal(during, before, 'pending: no notification before the commit');
    const after = await changed(marker, before);
    assert.notEqual(after, before, 'committed: notified');
    assert.equal(after, before.replace(/:0$/, ':1'), 'counted once: the rolled-back append notified nobody');
  });

  it('is null once its session is killed, and listens again (a new epoch) after the backoff', async () => {
    const before = await marker.marker();
    assert.ok(before);
    const admin = new pg.Client({ connectionString: process.env[POSTGRES_VARIABLE] });
    await admin.connect();
    try {
      const killed = await admin.query(
        'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1',
        [`gex job log listener pid ${process.pid}`],
      );
      assert.equal(killed.rowCount, 1, 'one listening session in this process');
    } finally {
      await admin.end();
    }
    assert.equal(await changed(marker, before), null, 'no session: no marker');
    assert.ok(
      warnings.some((w) => w.includes('Job log notifications')),
      warnings.join(''),
    );
    // appends meanwhile are not counted anywhere: a reader reads every time
    await new JobEventLog(db).appendEvents(job, line('unseen'));
    assert.equal(await marker.marker(), null, 'within the backoff: still none');
    clock += 1000;
    const again = await marker.marker();
    assert.match(again ?? '', /^pg-log:[0-9a-f]{16}:0$/);
    assert.notEqual(again!.split(':')[1], before.split(':')[1], 'a new epoch');
  });

  it('is null after close, and close ends the session', async () => {
    assert.ok(await marker.marker());
    await marker.close();
    assert.equal(await marker.marker(), null);
    let left = -1;
    for (const deadline = Date.now() + 3000; left !== 0 && Date.now() < deadline; await sleep(50)) {
      const row = await db.get<{ n: string }>('SELECT COUNT(*) AS n FROM pg_stat_activity WHERE application_name = ?', [
        `gex job log listener pid ${process.pid}`,
      ]);
      left = Number(row?.n);
    }
    assert.equal(left, 0, 'the listening session is gone');
  });
});
