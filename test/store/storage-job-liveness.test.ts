import assert from 'node:assert/strict';
import { endOrphanedJobs, StorageJobs } from '../../src/store/tables/index.js';
import { postgresBackend } from '../support/store.js';

/**
 * Storage jobs' liveness on PostgreSQL: a job whose server holds its lock is never ended as an
 * orphan — not by another server, and not by its own server's check either (advisory locks are
 * re-entrant within a session, so the check runs on a session of its own).
 */
describe("Storage jobs' liveness locks (PostgreSQL)", function () {
  this.timeout(30_000);
  const factory = postgresBackend();
  if (!factory) return;

  it('ends a job only once no session holds its lock, whichever server checks', async () => {
    const opened = await factory.open();
    const mine = opened.backend.storageJobLiveness(() => undefined)!;
    const other = opened.backend.storageJobLiveness(() => undefined)!;
    try {
      const projectId = (await opened.backend.createToken({ description: 'ci' })).info.projectId;
      const jobs = new StorageJobs(opened.backend.db, projectId);
      const id = 2 ** 40 + 7; // Storage job ids go past 2^31
      assert.equal(await mine.hold(id), true);
      await jobs.record(
        id,
        JSON.stringify({ id, status: 'processing', error: null }),
        'processing',
        'a worker elsewhere',
      );
      assert.deepEqual(await endOrphanedJobs(opened.backend.db, mine.orphans), [], 'not by its own server');
      assert.deepEqual(await endOrphanedJobs(opened.backend.db, other.orphans), [], 'not by another server');
      assert.equal((await jobs.get(id))?.body.includes('"processing"'), true);
      await mine.release(id);
      assert.deepEqual(await endOrphanedJobs(opened.backend.db, other.orphans), [id], 'once its lock is free');
    } finally {
      await mine.close();
      await other.close();
      await opened.dispose();
    }
  });
});
