import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { localToken } from '../../../src/store/embedded/tokens.js';
import {
  CHUNK_BYTES,
  POOL_FOR_READS_IN_TRANSACTIONS,
  ProjectFiles,
  purgeExpiredFiles,
  uploadMemory,
} from '../../../src/store/files/project-files.js';
import { PostgresDatabase } from '../../../src/store/sql/postgres-database.js';
import { endOrphanedJobs, ORPHANED_JOB_MESSAGE, StorageJobs } from '../../../src/store/tables/index.js';
import { storeBackends } from '../../support/store.js';

const DAY = 24 * 60 * 60 * 1000;
const TOKEN = { id: 1, description: 'test' };

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

for (const factory of storeBackends()) {
  describe(`File Storage in the store (${factory.name})`, function () {
    this.timeout(60_000);
    let opened: Awaited<ReturnType<typeof factory.open>>;
    let projectId: number;
    before(async () => {
      opened = await factory.open();
      projectId = (await localToken(opened.backend.db, 'default')).projectId;
    });
    after(async () => opened.dispose());

    it('keeps a file of several chunks byte for byte, in pieces of CHUNK_BYTES', async () => {
      const files = new ProjectFiles(opened.backend.db, projectId);
      const bytes = randomBytes(CHUNK_BYTES * 3 + 12_345);
      const file = await files.prepare({ name: 'x.bin', token: TOKEN });
      // fed in odd pieces, as a socket delivers them
      const pieces = Array.from({ length: Math.ceil(bytes.length / 70_001) }, (_, i) =>
        bytes.subarray(i * 70_001, (i + 1) * 70_001),
      );
      const uploaded = await files.upload(file.id, Readable.from(pieces), bytes.length);
      assert.equal(uploaded.sizeBytes, bytes.length);
      assert.equal(uploaded.state, 'uploaded');
      const chunks = await opened.backend.db.all<{ n: unknown }>(
        'SELECT LENGTH(bytes) AS n FROM storage_file_chunks WHERE file_id = ? ORDER BY seq',
        [file.id],
      );
      assert.deepEqual(
        chunks.map((c) => Number(c.n)),
        [CHUNK_BYTES, CHUNK_BYTES, CHUNK_BYTES, 12_345],
      );
      assert.ok((await readAll(files.content(uploaded))).equals(bytes));
      // its declared size gives the same chunks
      const declared = await files.prepare({ name: 'y.bin', token: TOKEN });
      await files.upload(declared.id, Readable.from(pieces), bytes.length, bytes.length);
      assert.ok((await readAll(files.content(await files.uploaded(declared.id)))).equals(bytes));
    });

    it('holds no more than uploadMemory() of a file: it reads no further while its chunk writes wait', async () => {
      assert.equal(uploadMemory(), 2 * CHUNK_BYTES);
      assert.equal(uploadMemory(10), 10);
      assert.equal(uploadMemory(5 * 1024 ** 3), 2 * CHUNK_BYTES);
      // chunk writes that wait until the test lets them go
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let written!: () => void;
      const firstWrite = new Promise<void>((resolve) => (written = resolve));
      const db = opened.backend.db;
      const gated = new Proxy(db, {
        get(target, key) {
          if (key === 'runLarge')
            return (sql: string, params: never[]) => {
              written();
              return gate.then(() => target.runLarge(sql, params));
            };
          const value = Reflect.get(target, key) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      const files = new ProjectFiles(gated, projectId);
      const file = await files.prepare({ name: 'held.bin', token: TOKEN });
      const piece = 64 * 1024;
      let pulled = 0;
      async function* body(): AsyncGenerator<Buffer> {
        for (let i = 0; i < 100; i++) {
          pulled++;
          yield Buffer.alloc(piece, i);
        }
      }
      const upload = files.upload(file.id, body(), 100 * piece);
      // it fills the chunk being written and the next one, then waits for the first write (no I/O
      // is left between the first write and that wait: a few turns of the loop are plenty)
      await firstWrite;
      for (let turns = 0; turns < 50; turns++) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(pulled * piece, uploadMemory());
      release();
      assert.equal((await upload).sizeBytes, 100 * piece);
      assert.equal(pulled, 100);
    });

    it('refuses a body longer than its declared size and leaves the file prepared', async () => {
      const files = new ProjectFiles(opened.backend.db, projectId);
      const file = await files.prepare({ name: 'long.bin', token: TOKEN });
      await assert.rejects(
        files.upload(file.id, Readable.from([Buffer.alloc(10), Buffer.alloc(10)]), 100, 15),
        (e: Error & { status?: number }) =>
          e.status === 400 && /more than the 15 bytes its Content-Length announced/.test(e.message),
      );
      assert.equal((await files.get(file.id)).state, 'prepared');
      assert.equal((await files.upload(file.id, Readable.from([Buffer.alloc(15)]), 100, 15)).sizeBytes, 15);
    });

    it('drops what a failed upload wrote and lets it be uploaded again', async () => {
      const files = new ProjectFiles(opened.backend.db, projectId);
      const file = await files.prepare({ name: 'x.csv', token: TOKEN });
      async function* broken(): AsyncGenerator<Buffer> {
        yield Buffer.alloc(CHUNK_BYTES + 10, 1);
        throw new Error('aborted');
      }
      await assert.rejects(files.upload(file.id, broken(), 10 * CHUNK_BYTES), /aborted/);
      const chunks = await opened.backend.db.all('SELECT seq FROM storage_file_chunks WHERE file_id = ?', [file.id]);
      assert.deepEqual(chunks, []);
      assert.equal((await files.get(file.id)).state, 'prepared');
      await assert.rejects(files.uploaded(file.id), /has not been uploaded/);
      const done = await files.upload(file.id, Readable.from([Buffer.from('ok')]), 10);
      assert.equal(done.sizeBytes, 2);
    });

    it('expires a file 15 days after it was prepared unless permanent, and purges its chunks', async () => {
      let now = new Date('2026-01-01T00:00:00Z');
      const files = new ProjectFiles(opened.backend.db, projectId, () => now);
      const temporary = await files.prepare({ name: 't.csv', token: TOKEN });
      const permanent = await files.prepare({ name: 'p.csv', token: TOKEN, isPermanent: true });
      await files.upload(temporary.id, Readable.from([Buffer.from('abc')]), 10);
      now = new Date(now.getTime() + 15 * DAY - 1);
      assert.equal((await files.get(temporary.id)).name, 't.csv');
      now = new Date(now.getTime() + 1);
      await assert.rejects(files.get(temporary.id), /not found/);
      assert.equal((await files.get(permanent.id)).expires, null);
      assert.equal(await purgeExpiredFiles(opened.backend.db, now), 1);
      const chunks = await opened.backend.db.all('SELECT seq FROM storage_file_chunks WHERE file_id = ?', [
        temporary.id,
      ]);
      assert.deepEqual(chunks, []);
      assert.equal((await files.get(permanent.id)).name, 'p.csv');
    });

    it('lists newest first, by tags, with limit and offset', async () => {
      let now = new Date('2026-02-01T00:00:00Z');
      const listing = (await localToken(opened.backend.db, 'listing')).projectId;
      const files = new ProjectFiles(opened.backend.db, listing, () => now);
      for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) {
        now = new Date(now.getTime() + 1000);
        await files.prepare({ name, token: TOKEN, tags: i % 2 === 0 ? ['even'] : ['odd'] });
      }
      const names = async (options: Parameters<ProjectFiles['list']>[0]) =>
        (await files.list(options)).map((f) => f.name);
      assert.deepEqual(await names({ limit: 100, offset: 0 }), ['d', 'c', 'b', 'a']);
      assert.deepEqual(await names({ limit: 100, offset: 0, tags: ['even'] }), ['c', 'a']);
      assert.deepEqual(await names({ limit: 1, offset: 1, tags: ['odd'] }), ['b']);
      assert.deepEqual(await names({ limit: 2, offset: 1 }), ['c', 'b']);
      // another project's files are not listed
      assert.ok(
        (await new ProjectFiles(opened.backend.db, projectId).list({ limit: 100, offset: 0 })).every(
          (f) => !['a', 'b', 'c', 'd'].includes(f.name),
        ),
      );
    });

    it('drops the chunks of a file deleted while it was uploaded', async () => {
      const files = new ProjectFiles(opened.backend.db, projectId);
      const file = await files.prepare({ name: 'gone.csv', token: TOKEN });
      async function* body(): AsyncGenerator<Buffer> {
        yield Buffer.alloc(CHUNK_BYTES, 2);
        await files.delete(file.id);
        yield Buffer.from('more');
      }
      await assert.rejects(files.upload(file.id, body(), 10 * CHUNK_BYTES), /not found/);
      const chunks = await opened.backend.db.all('SELECT seq FROM storage_file_chunks WHERE file_id = ?', [file.id]);
      assert.deepEqual(chunks, []);
    });

    it('ends `error` the jobs of a process that is gone, and only those', async () => {
      const jobs = new StorageJobs(opened.backend.db, projectId);
      const body = (id: number) => JSON.stringify({ id, status: 'processing', error: null });
      await jobs.record(11, body(11), 'processing', 'gone');
      await jobs.record(12, body(12), 'processing', 'alive');
      const ended = await endOrphanedJobs(opened.backend.db, { gone: (worker) => worker === 'gone' });
      assert.deepEqual(ended, [11]);
      const gone = JSON.parse((await jobs.get(11))!.body) as { status: string; error: { message: string } };
      assert.equal(gone.status, 'error');
      assert.equal(gone.error.message, ORPHANED_JOB_MESSAGE);
      assert.equal(JSON.parse((await jobs.get(12))!.body).status, 'processing');
    });
  });
}

describe('File Storage read beside an import transaction', () => {
  it('reads chunks beside the load only where the pool has a connection for them', () => {
    const url = 'postgres://postgres@127.0.0.1:5432/unused';
    const files = (poolSize: number) => new ProjectFiles(new PostgresDatabase(url, { poolSize }), 1);
    assert.equal(files(10).readableInTransactions, true, 'the default pool of 10');
    assert.equal(files(POOL_FOR_READS_IN_TRANSACTIONS).readableInTransactions, true);
    // GEX_PG_POOL_SIZE=3: two jobs' loads would leave their reads one connection; they copy first instead
    assert.equal(files(POOL_FOR_READS_IN_TRANSACTIONS - 1).readableInTransactions, false);
    assert.equal(files(1).readableInTransactions, false);
  });
});
