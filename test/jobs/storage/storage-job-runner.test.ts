import assert from 'node:assert/strict';
import { localToken } from '../../../src/store/embedded/tokens.js';
import { StorageJobs } from '../../../src/store/tables/index.js';
import { StorageJobRunner, workerGone, thisWorker } from '../../../src/jobs/storage/storage-job-runner.js';
import { UserError } from '../../../src/common/errors.js';
import { sqliteBackend } from '../../support/store.js';

const job = (id: number) => ({
  id,
  url: `/v2/storage/jobs/${id}`,
  tableId: 'in.c-a.t',
  operationName: 'tableImport',
  operationParams: {},
  createdTime: new Date().toISOString(),
  creatorToken: { id: '1', description: 'test' },
});

describe('Storage job runner', () => {
  let opened: Awaited<ReturnType<typeof sqliteBackend.open>>;
  let jobs: StorageJobs;
  before(async () => {
    opened = await sqliteBackend.open();
    jobs = new StorageJobs(opened.backend.db, (await localToken(opened.backend.db, 'default')).projectId);
  });
  after(async () => opened.dispose());

  const stored = async (id: number) => JSON.parse((await jobs.get(id))!.body) as Record<string, unknown>;

  it('runs jobs in order, at most `concurrency` at once; a user error ends the job error with its message', async () => {
    const runner = new StorageJobRunner({ concurrency: 1 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const answered = await runner.submit(jobs, job(101), async () => {
      await held;
      return { results: { done: 1 } };
    });
    assert.equal(answered.status, 'waiting');
    await runner.submit(jobs, job(102), async () => {
      throw new UserError(
        'GEX_TABLE_LOAD_REFUSED',
        'The table in.c-a.t has primary key id; the import asks for key no.',
      );
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await stored(101)).status, 'processing');
    assert.equal((await stored(102)).status, 'waiting', 'the second waits for the first');
    release();
    while ((await stored(102)).status === 'waiting' || (await stored(102)).status === 'processing')
      await new Promise((resolve) => setTimeout(resolve, 5));
    await runner.close();
    assert.deepEqual((await stored(101)).results, { done: 1 });
    const failed = await stored(102);
    assert.equal(failed.status, 'error');
    assert.deepEqual(failed.error, {
      code: 'storage.tables.validation',
      message: 'The table in.c-a.t has primary key id; the import asks for key no.',
    });
  });

  it('on close ends the jobs not started yet error, and waits for the running one', async () => {
    const runner = new StorageJobRunner({ concurrency: 1 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let secondRan = false;
    await runner.submit(jobs, job(201), async () => {
      await held;
      return { results: {} };
    });
    await runner.submit(jobs, job(202), async () => {
      secondRan = true;
      return { results: {} };
    });
    await new Promise((resolve) => setImmediate(resolve));
    const closed = runner.close();
    release();
    await closed;
    assert.equal((await stored(201)).status, 'success');
    const stopped = await stored(202);
    assert.equal(stopped.status, 'error');
    assert.match((stopped.error as { message: string }).message, /stopped before the job started; nothing was changed/);
    assert.equal(secondRan, false);
  });

  it("hides gex's own faults from the job's error (the log has them)", async () => {
    const runner = new StorageJobRunner();
    await runner.submit(jobs, job(301), async () => {
      throw new Error('SQLITE_CORRUPT at /var/lib/secret/path');
    });
    await runner.close();
    const failed = await stored(301);
    assert.equal(failed.status, 'error');
    assert.doesNotMatch(JSON.stringify(failed.error), /secret|SQLITE/);
  });

  it("knows this process's jobs as alive and a dead pid's as gone", () => {
    assert.equal(workerGone(thisWorker()), false);
    const dead = JSON.parse(thisWorker()) as { pid: number };
    dead.pid = 2 ** 22 + 12345; // above the kernel's pid limit: no such process
    assert.equal(workerGone(JSON.stringify(dead)), true);
    assert.equal(workerGone(JSON.stringify({ host: 'elsewhere', pid: 1 })), false, 'another host: unknown, left alone');
    assert.equal(workerGone('not json'), false);
  });
});
