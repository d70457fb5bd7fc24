import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_BRANCH } from '../../../src/jobs/job-request.js';
import { JobRepository } from '../../../src/jobs/job-repository.js';
import { JobLocks } from '../../../src/store/sql/advisory-locks.js';
import type { PostgresDatabase } from '../../../src/store/sql/postgres-database.js';
import type { EmbeddedBackend } from '../../../src/store/embedded/embedded-backend.js';
import { startServe } from '../../support/cli.js';
import { consoleLogin, type ConsoleClient } from '../../support/console.js';
import { openEmbeddedStore } from '../../support/open-store.js';
import { postgresBackend, POSTGRES_VARIABLE, TEST_KEY, type FreshStore } from '../../support/store.js';

const markerOf = (html: string) => decodeURIComponent(/marker=([^"&]*)/.exec(html)?.[1] ?? 'none');

/** The live log of a running job on a PostgreSQL store: polls with nothing new read nothing (204). */
describe('console: the live log on PostgreSQL', function () {
  this.timeout(90_000);
  const factory = postgresBackend();
  if (!factory) {
    it('needs PostgreSQL', function () {
      console.warn(`SKIPPED: the console's PostgreSQL live-log test needs ${POSTGRES_VARIABLE}`);
      this.skip();
    });
    return;
  }
  let store: FreshStore;
  let backend: EmbeddedBackend;
  let served: { child: ChildProcess; url: string; output: () => string };
  let client: ConsoleClient;
  let jobs: JobRepository;
  let job: { id: number; projectId: number };
  let locks: JobLocks;

  before(async () => {
    store = await factory.fresh();
    backend = await openEmbeddedStore(store.location, TEST_KEY);
    const { token, info } = await backend.createToken({ description: 'console' });
    jobs = new JobRepository(backend.db);
    const created = await jobs.create({
      projectId: info.projectId,
      componentId: 'ex-generic-v2',
      configId: 'shop',
      branchId: DEFAULT_BRANCH,
      mode: 'run',
      parentRunId: '',
      tokenId: info.id,
      tokenDescription: info.description,
      configRowIds: [],
      tag: null,
      orchestrationJobId: null,
      timeoutSeconds: null,
    });
    // held as a worker holds its job's lock: the server's monitor leaves the job running
    locks = new JobLocks(backend.db as PostgresDatabase, 'test worker', () => undefined);
    assert.ok(await locks.lock(created.id));
    assert.ok(await jobs.claim(created.id, 'test-worker'));
    job = { id: created.id, projectId: info.projectId };
    await jobs.appendEvents(job, [{ created: new Date().toISOString(), level: 'info', message: 'line one' }]);
    served = await startServe(['--store', store.location, '--workers', '0'], TEST_KEY);
    client = await consoleLogin(served.url, token);
  });
  after(async () => {
    if (served && served.child.exitCode === null) {
      served.child.kill('SIGTERM');
      await once(served.child, 'exit');
    }
    await locks?.close();
    await backend?.close();
    await store?.dispose();
  });

  it('answers 204 while nothing is new, the new lines after an append, then 204 again', async () => {
    const pageHtml = (await client.get(`/console/jobs/${job.id}`)).html;
    assert.match(markerOf(pageHtml), /^pg-log:[0-9a-f]{16}:\d+$/, 'the job page carries a log marker');
    const first = await client.get(`/console/jobs/${job.id}/log?after=${job.id}:0`);
    assert.equal(first.status, 200);
    assert.ok(first.html.includes('line one'), first.html);
    const marker = markerOf(first.html);
    assert.match(marker, /^pg-log:[0-9a-f]{16}:\d+$/);
    const poll = (m: string, seq: number) =>
      client.get(`/console/jobs/${job.id}/log?after=${job.id}:${seq}&marker=${encodeURIComponent(m)}`);
    for (let i = 0; i < 5; i++) {
      const idle = await poll(marker, 1);
      assert.equal(idle.status, 204, `poll ${i}: ${idle.html}`);
      assert.equal(idle.html, '');
    }
    // a wrong marker is read as usual
    assert.equal((await poll('pg-log:0000000000000000:0', 1)).status, 200);

    await jobs.appendEvents(job, [{ created: new Date().toISOString(), level: 'info', message: 'line two' }]);
    let fresh = await poll(marker, 1);
    for (const deadline = Date.now() + 5000; fresh.status === 204 && Date.now() < deadline; await sleep(50))
      fresh = await poll(marker, 1);
    assert.equal(fresh.status, 200, 'the append is seen');
    assert.ok(fresh.html.includes('line two'), fresh.html);
    assert.ok(!fresh.html.includes('line one'), 'only the lines after the cursor');
    const next = markerOf(fresh.html);
    assert.notEqual(next, marker);
    assert.equal((await poll(next, 2)).status, 204, 'nothing new again');
    assert.equal((await jobs.get(job.projectId, job.id))?.status, 'processing', 'the job ran all along');
  });
});
