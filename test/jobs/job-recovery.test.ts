import assert from 'node:assert/strict';
import os from 'node:os';
import {
  identityLiveness,
  parseProcessIdentity,
  processStartMark,
  thisProcess,
  thisProcessText,
} from '../../src/common/process-liveness.js';
import { silentLogger } from '../../src/common/logger.js';
import { openJobQueue, type JobQueue } from '../../src/jobs/job-queue.js';
import type { NewJob } from '../../src/jobs/job-record.js';
import { KILLED_WITHOUT_WORKER, WORKER_STOPPED } from '../../src/jobs/job-result.js';
import { StoreClaimSource } from '../../src/jobs/job-source.js';
import { STALE_MS, WorkerRegistry } from '../../src/jobs/worker-registry.js';
import { JobLocks } from '../../src/store/sql/advisory-locks.js';
import type { PostgresDatabase } from '../../src/store/sql/postgres-database.js';
import { runRequest } from '../support/flow-setup.js';
import { storeBackends } from '../support/store.js';

/** An identity as an earlier process with this very pid wrote it (a restarted container: gex is PID 1). */
const samePidEarlier = () =>
  JSON.stringify({ host: os.hostname(), pid: process.pid, processStart: 'another-boot:1', instance: 'e'.repeat(16) });

describe('who runs a job: process identities, recovery of lost jobs, kills without a worker', function () {
  this.timeout(60_000);

  it('a process identity tells this process from an earlier one with the same pid, and from a reused pid', () => {
    const me = thisProcess();
    assert.equal(identityLiveness(me), 'alive');
    assert.equal(identityLiveness(parseProcessIdentity(thisProcessText())!), 'alive', 'read back from its text');
    assert.equal(
      identityLiveness(parseProcessIdentity(samePidEarlier())!),
      'dead',
      'same host and pid, not this process',
    );
    assert.equal(identityLiveness({ ...me, instance: undefined, processStart: 'x:1' }), 'dead');
    assert.equal(
      identityLiveness(parseProcessIdentity(`${os.hostname()}:${process.pid}`)!),
      'dead',
      'the old host:pid form naming this pid was written by another process',
    );
    const parent = { host: os.hostname(), pid: process.ppid, processStart: processStartMark(process.ppid) };
    assert.equal(identityLiveness(parent), 'alive', 'another live process of this host');
    assert.equal(identityLiveness({ ...parent, processStart: 'another-boot:1' }), 'dead', 'its pid, reused');
    assert.equal(identityLiveness({ host: 'elsewhere', pid: process.pid }), 'unknown');
    assert.equal(parseProcessIdentity('not an identity'), undefined);
    assert.equal(parseProcessIdentity('{"host":1}'), undefined);
  });

  for (const factory of storeBackends()) {
    describe(factory.name, () => {
      let opened: Awaited<ReturnType<typeof factory.open>>;
      let queue: JobQueue;
      let job: (config: string) => NewJob;
      let now: Date;
      beforeEach(async () => {
        opened = await factory.open();
        queue = await openJobQueue(opened.backend, { logger: silentLogger() });
        const token = (await opened.backend.createToken({ description: 'ci' })).info;
        job = (config) => runRequest(token, config);
        now = new Date();
      });
      afterEach(async () => {
        await queue.close();
        await opened.dispose();
      });

      /** a job of configuration `config`, claimed by `worker` */
      const running = async (config: string, worker: string) => {
        const created = await queue.jobs.create(job(config));
        assert.equal((await queue.jobs.claim(created.id, worker))?.status, 'processing');
        return created.id;
      };
      const statusOf = async (id: number) => (await queue.jobs.get(null, id))!;

      it('the registry: pools register with their capacity, leave when they stop; a stale one of another host is gone', async () => {
        const registry = new WorkerRegistry(opened.backend.db, () => now);
        assert.equal(await registry.capacity(), 0);
        await registry.register(3);
        assert.equal(await registry.capacity(), 3);
        assert.equal(await registry.gone(thisProcessText()), false);
        const elsewhere = JSON.stringify({ host: 'elsewhere', pid: 7, instance: 'a'.repeat(16) });
        await opened.backend.db.run(
          'INSERT INTO queue_workers (identity, host, capacity, started, seen) VALUES (?, ?, ?, ?, ?)',
          [elsewhere, 'elsewhere', 2, now.toISOString(), now.toISOString()],
        );
        assert.equal(await registry.capacity(), 5, 'a fresh worker of another host counts');
        assert.equal(await registry.gone(elsewhere), false);
        now = new Date(now.getTime() + STALE_MS + 1000);
        assert.equal(await registry.gone(elsewhere), true, 'not seen for longer than STALE_MS');
        assert.equal(await registry.capacity(), 3, 'a process of this host is asked, not its heartbeat');
        assert.equal(
          (await opened.backend.db.all('SELECT identity FROM queue_workers')).length,
          1,
          'stale rows deleted',
        );
        await registry.unregister();
        assert.equal(await registry.capacity(), 0);
        assert.equal(await registry.gone(JSON.stringify({ host: 'elsewhere', pid: 8 })), true, 'never registered');
      });

      if (factory.name === 'SQLite') {
        it('recovery ends the jobs of a worker with this pid but another identity (a restarted container), and only those', async () => {
          const registry = new WorkerRegistry(opened.backend.db);
          await registry.register(1);
          const fresh = JSON.stringify({ host: 'elsewhere', pid: 9, instance: 'b'.repeat(16) });
          await opened.backend.db.run(
            'INSERT INTO queue_workers (identity, host, capacity, started, seen) VALUES (?, ?, ?, ?, ?)',
            [fresh, 'elsewhere', 1, new Date().toISOString(), new Date().toISOString()],
          );
          const lost = await running('a', samePidEarlier());
          const legacy = await running('b', `${os.hostname()}:${process.pid}`);
          const mine = await running('c', thisProcessText());
          const remote = await running('d', fresh);
          const vanished = await running(
            'e',
            JSON.stringify({ host: 'renamed-container', pid: 1, instance: 'c'.repeat(16) }),
          );
          const next = await queue.jobs.create(job('a'));
          assert.equal(next.status, 'waiting');
          const source = new StoreClaimSource(queue.jobs, registry, silentLogger());
          assert.deepEqual((await source.recoverLost()).sort(), [lost, legacy, vanished].sort());
          for (const id of [lost, legacy, vanished]) {
            const ended = await statusOf(id);
            assert.equal(ended.status, 'error');
            assert.equal(ended.result?.message, WORKER_STOPPED);
          }
          for (const id of [mine, remote]) assert.equal((await statusOf(id)).status, 'processing', `job ${id} kept`);
          assert.equal((await statusOf(next.id)).status, 'created', "the configuration's next job runs now");
          await registry.unregister();
        });
      }

      it('a kill of a job whose worker is gone ends it at once; one whose worker runs waits for it', async () => {
        // PostgreSQL: the job's session lock tells; SQLite: the worker's identity
        let locks: JobLocks | undefined;
        let alive: number;
        if (factory.name === 'PostgreSQL') {
          locks = new JobLocks(opened.backend.db as PostgresDatabase, 'test worker', () => undefined);
          alive = await running('alive', 'w');
          assert.equal(await locks.lock(alive), true);
        } else alive = await running('alive', thisProcessText());
        const orphan = await running('orphan', samePidEarlier());
        const next = await queue.jobs.create(job('orphan'));
        try {
          const killed = await queue.jobs.kill((await statusOf(orphan)).projectId, orphan);
          assert.equal(killed?.status, 'terminated');
          assert.equal(killed?.result?.message, KILLED_WITHOUT_WORKER);
          assert.equal((await statusOf(next.id)).status, 'created', "the configuration's next job runs now");
          const waiting = await queue.jobs.kill((await statusOf(alive)).projectId, alive);
          assert.equal(waiting?.status, 'terminating', 'its worker stops it');
        } finally {
          await locks?.close();
        }
      });
    });
  }
});
