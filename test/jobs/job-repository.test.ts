import assert from 'node:assert/strict';
import { JobRepository } from '../../src/jobs/job-repository.js';
import type { NewJob } from '../../src/jobs/job-record.js';
import { DEFAULT_SEARCH_LIMIT, type JobSearch } from '../../src/jobs/job-search.js';
import { TRANSITIONS, JOB_STATUSES, isFinished } from '../../src/jobs/statuses.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { runRequest } from '../support/flow-setup.js';
import { storeBackends, TEST_KEY } from '../support/store.js';

const search = (more: Partial<JobSearch> = {}): JobSearch => ({
  limit: DEFAULT_SEARCH_LIMIT,
  offset: 0,
  sortBy: 'id',
  sortOrder: 'desc',
  ...more,
});
const ok = { message: 'done', configVersion: '1', output: { tables: [] } };

describe('queue jobs in the store', function () {
  this.timeout(30_000);

  it('statuses: created → waiting → processing → success|error; finished ones move nowhere', () => {
    assert.deepEqual(TRANSITIONS.created, ['waiting', 'processing', 'cancelled']);
    assert.ok(TRANSITIONS.processing.includes('terminating'));
    assert.deepEqual(TRANSITIONS.terminating, ['terminated', 'error']);
    assert.deepEqual(JOB_STATUSES.filter(isFinished), ['success', 'error', 'warning', 'terminated', 'cancelled']);
  });

  for (const factory of storeBackends()) {
    describe(factory.name, () => {
      let opened: Awaited<ReturnType<typeof factory.open>>;
      let jobs: JobRepository;
      let job: (config: string, more?: Partial<NewJob>) => NewJob;
      let other: number;
      beforeEach(async () => {
        opened = await factory.open();
        jobs = new JobRepository(opened.backend.db);
        const token = (await opened.backend.createToken({ description: 'ci' })).info;
        other = (await opened.backend.createToken({ description: 'x', project: 'other' })).info.projectId;
        job = (config, more = {}) => runRequest(token, config, more);
      });
      afterEach(() => opened.dispose());

      it('runs the jobs of one configuration one at a time, in order; other configurations meanwhile', async () => {
        const a1 = await jobs.create(job('a'));
        const a2 = await jobs.create(job('a'));
        const b1 = await jobs.create(job('b'));
        assert.equal(a1.status, 'created');
        assert.equal(a2.status, 'waiting');
        assert.equal(a1.runId, String(a1.id));
        assert.equal((await jobs.claimNext('w1'))?.id, a1.id);
        assert.equal((await jobs.claimNext('w1'))?.id, b1.id);
        assert.equal(await jobs.claimNext('w1'), undefined, 'a2 waits while a1 runs');
        assert.equal(await jobs.finish(a1.id, () => ({ status: 'success', result: ok })), true);
        assert.equal(await jobs.finish(a1.id, () => ({ status: 'error', result: ok })), false, 'finished once');
        assert.equal((await jobs.claimNext('w1'))?.id, a2.id);
        const done = (await jobs.get(a1.projectId, a1.id))!;
        assert.equal(done.status, 'success');
        assert.deepEqual(done.result, ok);
        assert.equal(await jobs.get(other, a1.id), undefined, 'another project does not see it');
      });

      it('the database refuses a second running job of one configuration', async () => {
        const a1 = await jobs.create(job('a'));
        const a2 = await jobs.create(job('a'));
        await jobs.claimNext('w1');
        await assert.rejects(
          opened.backend.db.run(`UPDATE queue_jobs SET status = 'processing' WHERE id = ?`, [a2.id]),
        );
        assert.equal((await jobs.get(null, a1.id))?.status, 'processing');
      });

      it('claims from several connections at once never hand out one job twice or two of a configuration', async () => {
        const second = await openEmbeddedStore(opened.location, TEST_KEY);
        try {
          const repos = [jobs, new JobRepository(second.db)];
          for (let i = 0; i < 6; i++) await jobs.create(job(i % 2 ? 'a' : 'b'));
          const claimed = await Promise.all(Array.from({ length: 8 }, (_, i) => repos[i % 2].claimNext(`w${i}`)));
          const got = claimed.filter((j) => j !== undefined);
          assert.equal(got.length, 2, 'one per configuration');
          assert.deepEqual(got.map((j) => j.configId).sort(), ['a', 'b']);
        } finally {
          await second.close();
        }
      });

      it('hands the next job of a configuration to the dispatch when the one before it ends or is cancelled', async () => {
        const told: number[][] = [];
        const queue = new JobRepository(opened.backend.db, {
          onRunnable: (next) => void told.push(next.map((j) => j.id)),
        });
        const a1 = await queue.create(job('a'));
        const a2 = await queue.create(job('a'));
        const a3 = await queue.create(job('a'));
        assert.deepEqual(told, [[a1.id]], 'only the first of a configuration is runnable');
        assert.equal(await queue.claim(a2.id, 'w'), undefined, 'a waiting job is not claimed by id');
        assert.equal((await queue.claim(a1.id, 'w'))?.status, 'processing');
        assert.equal(await queue.claim(a1.id, 'w2'), undefined, 'a second delivery does not run it again');
        await queue.finish(a1.id, () => ({ status: 'success', result: ok }));
        assert.deepEqual(told.at(-1), [a2.id]);
        assert.equal((await queue.get(null, a2.id))?.status, 'created');
        await queue.kill(a2.projectId, a2.id);
        assert.deepEqual(told.at(-1), [a3.id], 'cancelling the next one makes the one after it next');
        assert.equal((await queue.get(null, a3.id))?.status, 'created');
      });

      it('retries an application error while retries are left, never a user error or a timeout', async () => {
        const queue = new JobRepository(opened.backend.db, { retryLimit: 1 });
        const failed = { ...ok, error: { type: 'application' as const, message: 'crashed' } };
        const a = await queue.create(job('a'));
        assert.equal(a.retryLimit, 1);
        await queue.claim(a.id, 'w');
        await queue.finish(a.id, () => ({ status: 'error', result: failed }));
        const again = (await queue.get(null, a.id))!;
        assert.equal(again.status, 'created');
        assert.equal(again.attempt, 2);
        assert.equal(again.worker, null);
        const log = await queue.events(a.projectId, { jobId: a.id, limit: 10 });
        assert.match(log[0].message, /Attempt 1 ended with an application error \(crashed\): retrying, attempt 2 of 2/);
        await queue.claim(a.id, 'w');
        await queue.finish(a.id, () => ({ status: 'error', result: failed }));
        assert.equal((await queue.get(null, a.id))?.status, 'error', 'no retries left');
        const u = await queue.create(job('u'));
        await queue.claim(u.id, 'w');
        await queue.finish(u.id, () => ({
          status: 'error',
          result: { ...ok, error: { type: 'user', message: 'bad' } },
        }));
        assert.equal((await queue.get(null, u.id))?.status, 'error', 'a user error is final');
        assert.equal((await jobs.create(job('z'))).retryLimit, 0, 'retries are off by default');
      });

      it('reconcile finds what a crash between a commit and its dispatch left undispatched', async () => {
        const a1 = await jobs.create(job('a'));
        const a2 = await jobs.create(job('a'));
        const b1 = await jobs.create(job('b'));
        // a configuration whose next job is lost: waiting with nothing running (older servers left this)
        await opened.backend.db.run(`UPDATE queue_jobs SET status = 'cancelled' WHERE id = ?`, [a1.id]);
        assert.deepEqual(await jobs.reconcile(), [
          { id: a2.id, attempt: 1 },
          { id: b1.id, attempt: 1 },
        ]);
        assert.equal((await jobs.get(null, a2.id))?.status, 'created');
      });

      it('deletes finished jobs and their logs older than the retention, keeps the rest', async () => {
        const old = await jobs.create(job('a'));
        await jobs.claim(old.id, 'w');
        await jobs.appendEvents(old, [{ created: '2026-01-01T00:00:00.000Z', level: 'info', message: 'x' }]);
        await jobs.finish(old.id, () => ({ status: 'success', result: ok }), new Date('2026-01-01T00:00:00Z'));
        const running = await jobs.create(job('b'));
        await jobs.claim(running.id, 'w');
        assert.equal(await jobs.deleteFinishedBefore(new Date('2025-12-31T00:00:00Z')), 0);
        assert.equal(await jobs.deleteFinishedBefore(new Date('2026-01-02T00:00:00Z')), 1);
        assert.equal(await jobs.get(null, old.id), undefined);
        assert.deepEqual(await jobs.events(old.projectId, { jobId: old.id, limit: 10 }), []);
        assert.equal((await jobs.get(null, running.id))?.status, 'processing');
      });

      it('kill: a pending job is cancelled, a running one terminating; a finished one cannot be killed', async () => {
        const a1 = await jobs.create(job('a'));
        const a2 = await jobs.create(job('a'));
        await jobs.claimNext('w');
        assert.equal((await jobs.kill(a1.projectId, a2.id))?.status, 'cancelled');
        const killing = (await jobs.kill(a1.projectId, a1.id))!;
        assert.equal(killing.status, 'terminating');
        assert.equal(killing.desiredStatus, 'terminating');
        await jobs.finish(a1.id, (current) => ({
          status: current === 'terminating' ? 'terminated' : 'success',
          result: ok,
        }));
        assert.equal((await jobs.get(null, a1.id))?.status, 'terminated');
        await assert.rejects(jobs.kill(a1.projectId, a1.id), /already finished/);
        assert.equal(await jobs.kill(other, a1.id), undefined);
      });

      it('searches by every filter, sorted and paged', async () => {
        const a = await jobs.create(job('a', { configRowIds: ['r1', 'r%'], parentRunId: '77' }));
        const b = await jobs.create(job('b', { mode: 'forceRun' }));
        const c = await jobs.create(job('c', { componentId: 'kds-team.ex-x' }));
        const ids = async (more: Partial<JobSearch>) => (await jobs.search(a.projectId, search(more))).map((j) => j.id);
        assert.equal(a.runId, `77.${a.id}`);
        assert.deepEqual(await ids({}), [c.id, b.id, a.id]);
        assert.deepEqual(await ids({ sortOrder: 'asc', limit: 2, offset: 1 }), [b.id, c.id]);
        assert.deepEqual(await ids({ configIds: ['a', 'c'] }), [c.id, a.id]);
        assert.deepEqual(await ids({ componentIds: ['kds-team.ex-x'] }), [c.id]);
        assert.deepEqual(await ids({ modes: ['forceRun'] }), [b.id]);
        assert.deepEqual(await ids({ configRowIds: ['r%'] }), [a.id]);
        assert.deepEqual(await ids({ configRowIds: ['r'] }), []);
        assert.deepEqual(await ids({ parentRunId: '' }), [c.id, b.id]);
        assert.deepEqual(await ids({ runIds: [a.runId] }), [a.id]);
        assert.deepEqual(await ids({ statuses: ['waiting'] }), []);
        assert.deepEqual(await ids({ createdFrom: '2999-01-01T00:00:00.000Z' }), []);
        assert.deepEqual(await ids({ createdTo: '2999-01-01T00:00:00.000Z', ids: [b.id] }), [b.id]);
        assert.deepEqual(await ids({ none: true }), []);
        assert.deepEqual(await jobs.search(other, search()), []);
      });

      it('searches with lists of any length: 1,000 and 100,000 values of every list filter', async () => {
        const a = await jobs.create(job('a', { configRowIds: ['r1', 'x"a'] }));
        const b = await jobs.create(job('b', { mode: 'forceRun' }));
        const ids = async (more: Partial<JobSearch>) => (await jobs.search(a.projectId, search(more))).map((j) => j.id);
        for (const n of [1000, 100_000]) {
          const texts = (last: string) => [...Array.from({ length: n - 1 }, (_, i) => `v${i}`), last];
          const numbers = (last: number) => [...Array.from({ length: n - 1 }, (_, i) => 10 ** 12 + i), last];
          assert.deepEqual(await ids({ configRowIds: texts('r1') }), [a.id], `${n} row ids`);
          assert.deepEqual(await ids({ configIds: texts('b'), ids: numbers(b.id) }), [b.id], `${n} ids`);
          assert.deepEqual(
            await ids({
              runIds: texts(a.runId),
              branchIds: texts('1'),
              tokenIds: numbers(a.tokenId),
              tokenDescriptions: texts(a.tokenDescription),
              componentIds: texts('ex-generic-v2'),
              modes: [...Array.from({ length: n - 1 }, () => 'forceRun' as const), 'run'],
              statuses: [...Array.from({ length: n - 1 }, () => 'success' as const), 'created'],
            }),
            [a.id],
            `${n} values of each list`,
          );
          assert.equal((await jobs.statuses(numbers(a.id))).get(a.id), 'created', `statuses of ${n} jobs`);
        }
        // element for element: an id that appears inside another one's JSON is not it
        assert.deepEqual(await ids({ configRowIds: ['a'] }), []);
        assert.deepEqual(await ids({ configRowIds: ['x"a'] }), [a.id]);
        // a NUL is in no job; an empty list matches none
        assert.deepEqual(await ids({ configRowIds: ['r1\0'], configIds: ['a\0'] }), []);
        assert.deepEqual(await ids({ configIds: [] }), []);
      });

      it("keeps a job's log lines, numbered, per project", async () => {
        const a = await jobs.create(job('a', { parentRunId: '5' }));
        await jobs.appendEvents(a, [{ created: 'now', level: 'info', message: 'one' }]);
        await jobs.appendEvents(a, [{ created: 'now', level: 'error', message: 'two' }]);
        const events = await jobs.events(a.projectId, { runId: '5', limit: 10 });
        assert.deepEqual(
          events.map((e) => [e.seq, e.message]),
          [
            [1, 'one'],
            [2, 'two'],
          ],
        );
        assert.deepEqual(await jobs.events(other, { jobId: a.id, limit: 10 }), []);
      });

      it('events newest first: the limit and the bounds (after, atMost) applied in SQL, child runs included', async () => {
        const parent = await jobs.create(job('a', { parentRunId: '9' }));
        const child = await jobs.create(job('b', { parentRunId: `9.${parent.id}` }));
        const stranger = await jobs.create(job('c', { parentRunId: '90' }));
        const lines = (n: number, name: string) =>
          Array.from({ length: n }, (_, i) => ({
            created: 'now',
            level: 'info' as const,
            message: `${name} ${i + 1}`,
          }));
        await jobs.appendEvents(parent, lines(1200, 'p'));
        await jobs.appendEvents(child, lines(3, 'c'));
        await jobs.appendEvents(stranger, lines(2, 's'));
        const messages = async (options: Partial<Parameters<JobRepository['events']>[1]>) =>
          (await jobs.events(parent.projectId, { runId: '9', newestFirst: true, limit: 1000, ...options })).map(
            (e) => e.message,
          );
        const newest = await messages({});
        assert.equal(newest.length, 1000);
        assert.deepEqual(newest.slice(0, 4), ['c 3', 'c 2', 'c 1', 'p 1200']);
        assert.equal(newest[999], 'p 204');
        assert.deepEqual(await messages({ limit: 2, atMost: { jobId: parent.id, seq: 203 } }), ['p 203', 'p 202']);
        assert.deepEqual(await messages({ after: { jobId: parent.id, seq: 1199 } }), ['c 3', 'c 2', 'c 1', 'p 1200']);
        assert.deepEqual(
          await messages({ after: { jobId: parent.id, seq: 1 }, atMost: { jobId: parent.id, seq: 3 } }),
          ['p 3', 'p 2'],
        );
        assert.deepEqual(await messages({ runId: `9.${parent.id}.${child.id}`, limit: 5 }), ['c 3', 'c 2', 'c 1']);
        assert.deepEqual(
          (await jobs.events(parent.projectId, { jobId: parent.id, newestFirst: true, limit: 1 })).map((e) => e.seq),
          [1200],
        );
        assert.deepEqual(await jobs.events(other, { runId: '9', newestFirst: true, limit: 10 }), []);
      });
    });
  }
});
