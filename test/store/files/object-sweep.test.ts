import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createLogger } from '../../../src/common/logger.js';
import type { EmbeddedBackend } from '../../../src/store/embedded/embedded-backend.js';
import { ObjectStoreBytes } from '../../../src/store/files/file-bytes.js';
import { fileKey } from '../../../src/store/files/object-store.js';
import { parseFileKey, sweepObjects } from '../../../src/store/files/object-sweep.js';
import { ProjectFiles, purgeExpiredFiles } from '../../../src/store/files/project-files.js';
import { trySingletonLock } from '../../../src/store/sql/advisory-locks.js';
import type { PostgresDatabase } from '../../../src/store/sql/postgres-database.js';
import { storageJobServices } from '../../../src/jobs/storage/storage-job-services.js';
import { freshBucket, swiftOrSkip, type Swift, type TestBucket } from '../../support/object-store.js';
import { storeBackends } from '../../support/store.js';

const TOKEN = { id: 1, description: 'test' };
const HOUR = 60 * 60 * 1000;

async function keys(bucket: TestBucket): Promise<string[]> {
  const found: string[] = [];
  for (let token: string | undefined, first = true; first || token; first = false) {
    const page = await bucket.store.list('', token);
    found.push(...page.objects.map((o) => o.key));
    token = page.continuation;
  }
  return found.sort();
}

async function uploads(bucket: TestBucket): Promise<string[]> {
  const page = await bucket.store.listMultipart('');
  return page.uploads.map((u) => u.key).sort();
}

describe('object store: the keys a sweep takes for files', () => {
  it('parses exactly the keys fileKey makes, nothing else', () => {
    assert.deepEqual(parseFileKey('projects/3/files/140737488355327'), { projectId: 3, fileId: 140737488355327 });
    for (const key of [
      'projects/03/files/1',
      'projects/0/files/1',
      'projects/1/files/1/x',
      'projects/1/files/',
      'projects/x/files/1',
      'projects/1/file/1',
      'projects/99999999999999999/files/1',
      'projects/9007199254740993/files/1',
      '.gex-probe-1234',
      'other/projects/1/files/1',
    ])
      assert.equal(parseFileKey(key), undefined, key);
  });
});

describe("object store sweep: the server's service", () => {
  const logged = () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    return { lines, logger: createLogger({ level: 'debug', format: 'text', stdout: sink, stderr: sink }) };
  };
  const until = async (test: () => boolean) => {
    for (let i = 0; i < 500 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it('warns of a failed sweep and tries again the next interval; one sweep at a time; stop waits and stops it', async () => {
    const { lines, logger } = logged();
    let calls = 0;
    let running = 0;
    let most = 0;
    let stoppedSeen = false;
    const store = {
      sweepObjects: async (options: { stopped?: () => boolean }) => {
        calls++;
        most = Math.max(most, ++running);
        try {
          if (calls === 1) throw new Error('the bucket said no');
          await new Promise((resolve) => setTimeout(resolve, 60));
          stoppedSeen ||= options.stopped?.() === true;
          return { objects: 3, deleted: 0, recent: 1, foreign: 2, uploads: 0, aborted: 0, interrupted: false };
        } finally {
          running--;
        }
      },
    };
    const { services } = storageJobServices(store, { logger, objectSweepIntervalMs: 10 });
    for (const service of services) await service.start();
    await until(() => calls >= 3);
    for (const service of [...services].reverse()) await service.stop();
    const text = lines.join('');
    assert.match(text, /WARN .*Object store sweep failed \(tried again in the next interval\): the bucket said no/);
    assert.match(text, /DEBUG .*Object store swept in \d+ ms: 3 objects, 0 deleted .* 2 not files' \(left\)/);
    assert.equal(most, 1, 'never two sweeps at once');
    assert.ok(stoppedSeen, 'the sweep running at stop was told to stop');
    const after = calls;
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(calls, after, 'no sweep after stop');
  });
});

for (const factory of storeBackends()) {
  describe(`object store sweep (${factory.name})`, function () {
    this.timeout(60_000);
    let swift: Swift;
    let bucket: TestBucket | undefined;
    let opened: Awaited<ReturnType<typeof factory.open>> | undefined;
    let backend: EmbeddedBackend;
    let projectId: number;

    beforeEach(async function () {
      swift = await swiftOrSkip(this);
      bucket = await freshBucket(swift, 'gex/');
      opened = await factory.open();
      backend = opened.backend;
      projectId = (await backend.createToken({ description: 'sweep' })).info.projectId;
      backend.storeFileBytesIn(bucket.store);
    });
    afterEach(async () => {
      await opened?.dispose();
      await bucket?.remove();
      opened = bucket = undefined;
    });

    const put = (key: string, text = 'x') => bucket!.store.putStream(key, Readable.from([Buffer.from(text)]));

    it('deletes only objects no row names, past the grace, a page at a time; foreign keys are counted and left', async () => {
      const b = bucket!;
      const files = new ProjectFiles(backend.db, projectId, undefined, new ObjectStoreBytes(b.store));
      const kept = await files.prepare({ name: 'kept.csv', token: TOKEN });
      await files.upload(kept.id, Readable.from([Buffer.from('a\n')]), 100);
      const prepared = await files.prepare({ name: 'prepared.csv', token: TOKEN });
      // bytes of a prepared file (an upload in flight, or a client's direct upload): its row names them
      await put(fileKey(projectId, prepared.id));
      const orphans = [fileKey(projectId, 7), fileKey(projectId, 8), fileKey(projectId, 9)];
      for (const key of orphans) await put(key);
      // a row's id under another project: not the key its row names
      const wrongProject = fileKey(projectId + 1000, kept.id);
      await put(wrongProject);
      const foreign = ['projects/01/files/2', 'projects/1/files/2/extra', 'projects/notes.txt'];
      for (const key of foreign) await put(key);
      await put('elsewhere/not-projects');
      // outside the store's prefix entirely: never listed
      await b.client.send(new PutObjectCommand({ Bucket: b.name, Key: fileKey(projectId, 5), Body: 'root' }));

      const before = await keys(b);
      // everything was written just now: within the grace, nothing goes
      const fresh = await backend.sweepObjects({ pageSize: 2 });
      assert.ok(fresh);
      assert.equal(fresh.deleted, 0);
      assert.equal(fresh.objects, 9);
      assert.equal(fresh.foreign, 3);
      assert.equal(fresh.recent, 6);
      assert.deepEqual(await keys(b), before);

      const later = new Date(Date.now() + 2 * HOUR);
      const swept = await backend.sweepObjects({ now: () => later, pageSize: 2 });
      assert.deepEqual(
        { objects: swept?.objects, deleted: swept?.deleted, foreign: swept?.foreign, recent: swept?.recent },
        { objects: 9, deleted: 4, foreign: 3, recent: 0 },
      );
      assert.deepEqual(
        await keys(b),
        [fileKey(projectId, kept.id), fileKey(projectId, prepared.id), ...foreign, 'elsewhere/not-projects'].sort(),
      );
      for (const key of [...orphans, wrongProject]) assert.equal(await b.store.head(key), undefined, key);
      // the key outside the prefix is there still, and the kept file reads as before
      const root = await b.client.send(new HeadObjectCommand({ Bucket: b.name, Key: fileKey(projectId, 5) }));
      assert.equal(root.ContentLength, 4);
      const read: Buffer[] = [];
      for await (const piece of files.content(await files.get(kept.id))) read.push(piece as Buffer);
      assert.equal(Buffer.concat(read).toString(), 'a\n');
      // a sweep told to stop stops before its next page
      await put(fileKey(projectId, 11));
      const halted = await sweepObjects(backend.db, b.store, { now: () => later, stopped: () => true });
      assert.equal(halted.interrupted, true);
      assert.equal(halted.objects, 0);
      assert.equal(await b.store.head(fileKey(projectId, 11)), 1);
      const listed = await b.store.list('projects', undefined, 1);
      assert.ok(listed.objects[0].lastModified instanceof Date, 'the list says when each object was written');
      // a second sweep has nothing left to do but the object put since
      assert.equal((await backend.sweepObjects({ now: () => later }))?.deleted, 1);
      const again = await backend.sweepObjects({ now: () => later });
      assert.equal(again?.deleted, 0);
      assert.equal(again?.aborted, 0);
    });

    it('aborts multipart uploads whose file is gone, expired or already uploaded; keeps those of files still to upload until stale', async () => {
      const b = bucket!;
      let now = new Date();
      const files = new ProjectFiles(backend.db, projectId, () => now, new ObjectStoreBytes(b.store));
      const waiting = await files.prepare({ name: 'waiting.csv', token: TOKEN });
      const done = await files.prepare({ name: 'done.csv', token: TOKEN });
      await files.upload(done.id, Readable.from([Buffer.from('d\n')]), 100);
      const expiring = await files.prepare({ name: 'expiring.csv', token: TOKEN });
      await backend.db.run('UPDATE storage_files SET expires = ? WHERE id = ?', [
        new Date(Date.now() + HOUR).toISOString(),
        expiring.id,
      ]);
      for (const id of [waiting.id, done.id, expiring.id, 4242]) await b.store.createMultipart(fileKey(projectId, id));
      await b.store.createMultipart('projects/notes.txt');
      assert.equal((await uploads(b)).length, 5);

      const soon = await backend.sweepObjects({ now: () => now });
      assert.equal(soon?.aborted, 0, 'all within the grace');
      now = new Date(Date.now() + 2 * HOUR);
      const swept = await backend.sweepObjects({ now: () => now, pageSize: 2 });
      assert.equal(swept?.uploads, 5);
      assert.equal(swept?.aborted, 3);
      assert.deepEqual(await uploads(b), [fileKey(projectId, waiting.id), 'projects/notes.txt'].sort());
      // older than any request or pre-signed address lives, the file not expired yet: left by a server that died
      now = new Date(Date.now() + 9 * 24 * HOUR);
      assert.equal((await files.get(waiting.id)).state, 'prepared');
      assert.equal((await backend.sweepObjects({ now: () => now }))?.aborted, 1);
      assert.deepEqual(await uploads(b), ['projects/notes.txt']);
    });

    it('the purge removes the objects of prepared files past their expiry, rows first', async () => {
      const b = bucket!;
      const files = new ProjectFiles(backend.db, projectId, undefined, new ObjectStoreBytes(b.store));
      const prepared = await files.prepare({ name: 'direct.csv', token: TOKEN });
      await put(fileKey(projectId, prepared.id), 'sent straight to the bucket');
      const later = new Date(Date.now() + 16 * 24 * HOUR);
      assert.equal(await purgeExpiredFiles(backend.db, later, undefined, new ObjectStoreBytes(b.store)), 1);
      assert.equal(await b.store.head(fileKey(projectId, prepared.id)), undefined);
    });

    it('a store without an object store has nothing to sweep', async () => {
      const other = await factory.open();
      try {
        assert.equal(await other.backend.sweepObjects(), undefined);
      } finally {
        await other.dispose();
      }
    });

    if (factory.name === 'PostgreSQL')
      it('one process sweeps at a time: a sweep while another holds the lock does nothing', async () => {
        const orphan = fileKey(projectId, 77);
        await put(orphan);
        const later = new Date(Date.now() + 2 * HOUR);
        const release = await trySingletonLock(backend.db as PostgresDatabase, 'object-sweep');
        assert.ok(release);
        try {
          assert.equal(await backend.sweepObjects({ now: () => later }), undefined);
          assert.equal(await bucket!.store.head(orphan), 1);
        } finally {
          await release();
        }
        assert.equal((await backend.sweepObjects({ now: () => later }))?.deleted, 1);
        assert.equal(await bucket!.store.head(orphan), undefined);
      });

    it("runs as a server's background service: a log line of counts, never a key", async () => {
      const orphan = fileKey(projectId, 31337);
      await put(orphan);
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const logger = createLogger({ level: 'info', format: 'text', stdout: sink, stderr: sink });
      const later = new Date(Date.now() + 2 * HOUR);
      const { services } = storageJobServices(backend, {
        logger,
        objectSweepIntervalMs: 20,
        objectSweep: { now: () => later },
      });
      for (const service of services) await service.start();
      try {
        for (let i = 0; i < 500 && !lines.some((l) => l.includes('Object store swept')); i++)
          await new Promise((resolve) => setTimeout(resolve, 10));
      } finally {
        for (const service of [...services].reverse()) await service.stop();
      }
      const line = lines.find((l) => l.includes('Object store swept'));
      assert.ok(line, lines.join(''));
      assert.match(line, /1 objects, 1 deleted \(no file names them\)/);
      assert.equal(line.includes('31337'), false, 'no key in the line');
      assert.equal(await bucket!.store.head(orphan), undefined);
    });
  });
}
