import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { fileKey, S3ObjectStore } from '../../../src/store/files/object-store.js';
import { ProjectFiles } from '../../../src/store/files/project-files.js';
import { ObjectStoreBytes } from '../../../src/store/files/file-bytes.js';
import { freshBucket, swiftOrSkip, swiftSettings, type Swift, type TestBucket } from '../../support/object-store.js';
import { describeEachBackend, useTestServer, type Json, type TestServer } from '../../support/storage-api-server.js';

const S = '/v2/storage';
const TOKEN = { id: 1, description: 'test' };

async function finished(server: TestServer, job: Json): Promise<Json> {
  for (;;) {
    const res = await server.get(`${S}/jobs/${job.id}`);
    if (res.body.status === 'success' || res.body.status === 'error') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describeEachBackend('File Storage with the bytes in an object store', (backendFactory) => {
  const server = useTestServer({ backend: backendFactory });
  let bucket: TestBucket;
  let projectId: number;
  let swift: Swift;

  beforeEach(async function () {
    this.timeout(30_000);
    swift = await swiftOrSkip(this);
    bucket = await freshBucket(swift, 'files/');
    server().backend.storeFileBytesIn(bucket.store);
    projectId = (await server().backend.authenticate(server().token))!.projectId;
  });
  afterEach(async () => {
    await bucket?.remove();
  });

  const filesOf = () => new ProjectFiles(server().backend.db, projectId, undefined, new ObjectStoreBytes(bucket.store));

  it('imports a file read from its object into a table, with no chunk rows in the database', async () => {
    const content = 'id,name\n' + Array.from({ length: 2000 }, (_, i) => `${i},name ${i}\n`).join('');
    const prepared = await server().post(`${S}/files/prepare`, { json: { name: 'big.csv' } });
    const put = await fetch(prepared.body.uploadParams.url, {
      method: 'PUT',
      headers: { 'X-StorageApi-Token': server().token },
      body: content,
    });
    assert.equal(put.status, 200, await put.text());
    const id = Number(prepared.body.id);
    assert.equal(await bucket.store.head(fileKey(projectId, id)), Buffer.byteLength(content));
    await server().post(`${S}/buckets`, { json: { name: 'b', stage: 'in' } });
    const started = await server().post(`${S}/buckets/in.c-b/tables-async`, { json: { name: 't', dataFileId: id } });
    assert.equal(started.status, 202, started.text);
    const job = await finished(server(), started.body);
    assert.equal(job.status, 'success', JSON.stringify(job));
    const table = await server().get(`${S}/tables/in.c-b.t`);
    assert.equal(table.body.rowsCount, 2000);
    const chunks = await server().backend.db.get<{ n: unknown }>(
      'SELECT COUNT(*) AS n FROM storage_file_chunks WHERE file_id = ?',
      [id],
    );
    assert.equal(Number(chunks?.n), 0);
  });

  it('leaves a file prepared and no object when its upload breaks off, and takes the retry', async () => {
    const files = filesOf();
    const file = await files.prepare({ name: 'x.csv', token: TOKEN });
    async function* brokenOff(): AsyncGenerator<Buffer> {
      yield Buffer.from('a,b\n');
      throw new Error('client gone');
    }
    await assert.rejects(files.upload(file.id, brokenOff(), 1000), /client gone/);
    assert.equal((await files.get(file.id)).state, 'prepared');
    assert.equal(await bucket.store.head(fileKey(projectId, file.id)), undefined);
    // longer than its Content-Length: refused before the object is complete
    await assert.rejects(files.upload(file.id, Readable.from([Buffer.from('12345')]), 1000, 3), /Content-Length/);
    assert.equal(await bucket.store.head(fileKey(projectId, file.id)), undefined);
    const done = await files.upload(file.id, Readable.from([Buffer.from('a,b\n1,2\n')]), 1000, 8);
    assert.equal(done.state, 'uploaded');
    assert.equal(done.sizeBytes, 8);
    const read: Buffer[] = [];
    for await (const piece of files.content(done)) read.push(piece as Buffer);
    assert.equal(Buffer.concat(read).toString(), 'a,b\n1,2\n');
  });

  it('deletes the object of a file deleted while it was uploaded', async () => {
    const files = filesOf();
    const file = await files.prepare({ name: 'y.csv', token: TOKEN });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* slow(): AsyncGenerator<Buffer> {
      yield Buffer.from('a\n');
      await gate;
      yield Buffer.from('1\n');
    }
    const uploading = files.upload(file.id, slow(), 1000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await files.delete(file.id);
    release();
    await assert.rejects(uploading, /not found/);
    assert.equal(await bucket.store.head(fileKey(projectId, file.id)), undefined);
  });

  it('refuses a download (404, before any byte) whose object is missing or not of its size', async () => {
    // uploaded to the database before the object store was set
    const inDatabase = new ProjectFiles(server().backend.db, projectId);
    const old = await inDatabase.prepare({ name: 'before.csv', token: TOKEN });
    await inDatabase.upload(old.id, Readable.from([Buffer.from('a\n1\n')]), 1000);
    const before = await server().get(`${S}/files/${old.id}/content`);
    assert.equal(before.status, 404, before.text);
    assert.match(before.body.error, new RegExp(`The bytes of file ${old.id} are not in s3://${bucket.name}/files/`));
    // an object changed in the bucket behind gex's back
    const files = filesOf();
    const file = await files.prepare({ name: 'z.csv', token: TOKEN });
    await files.upload(file.id, Readable.from([Buffer.from('abc')]), 1000);
    const fine = await fetch(`${server().baseUrl}${S}/files/${file.id}/content`, {
      headers: { 'X-StorageApi-Token': server().token },
    });
    assert.equal(await fine.text(), 'abc');
    await bucket.store.putStream(fileKey(projectId, file.id), Readable.from([Buffer.from('abcdef')]));
    const changed = await server().get(`${S}/files/${file.id}/content`);
    assert.equal(changed.status, 404, changed.text);
    assert.match(changed.body.error, /are 6 bytes rather than 3 in s3:/);
  });

  it('answers 503 with Retry-After when the object store cannot be reached, and the file stays prepared', async () => {
    const files = filesOf();
    const uploaded = await files.prepare({ name: 'up.csv', token: TOKEN });
    await files.upload(uploaded.id, Readable.from([Buffer.from('a\n')]), 1000);
    const unreachable = new S3ObjectStore({
      ...swiftSettings(swift, bucket.name, 'files/'),
      endpoint: 'http://127.0.0.1:1',
      maxAttempts: 1,
    });
    server().backend.storeFileBytesIn(unreachable);
    try {
      const prepared = await server().post(`${S}/files/prepare`, { json: { name: 'x.csv' } });
      const put = await fetch(prepared.body.uploadParams.url, {
        method: 'PUT',
        headers: { 'X-StorageApi-Token': server().token },
        body: 'a\n1\n',
      });
      const answer = (await put.json()) as { code: string; gexCode: string; error: string };
      assert.equal(put.status, 503, JSON.stringify(answer));
      assert.equal(put.headers.get('retry-after'), '5');
      assert.equal(answer.gexCode, 'GEX_OBJECT_STORE_UNREACHABLE');
      assert.match(answer.error, /cannot be reached while storing an object in s3:\/\//);
      assert.equal(answer.error.includes(swift.secretAccessKey), false);
      assert.equal((await server().get(`${S}/files/${prepared.body.id}`)).body.sizeBytes, null);
      const download = await server().get(`${S}/files/${uploaded.id}/content`);
      assert.equal(download.status, 503, download.text);
    } finally {
      unreachable.close();
    }
  });

  it("purges every project's expired files with their objects, rows first", async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const clocked = new ProjectFiles(server().backend.db, projectId, () => now, new ObjectStoreBytes(bucket.store));
    const expiring = await clocked.prepare({ name: 'old.csv', token: TOKEN });
    await clocked.upload(expiring.id, Readable.from([Buffer.from('a\n')]), 1000);
    const kept = await clocked.prepare({ name: 'kept.csv', isPermanent: true, token: TOKEN });
    await clocked.upload(kept.id, Readable.from([Buffer.from('b\n')]), 1000);
    now = new Date('2030-02-01T00:00:00Z');
    assert.equal(await clocked.purgeExpired(), 1);
    assert.equal(await bucket.store.head(fileKey(projectId, expiring.id)), undefined);
    assert.equal(await bucket.store.head(fileKey(projectId, kept.id)), 2);
    // the server's hourly purge of all projects goes through the same path
    const another = await clocked.prepare({ name: 'later.csv', token: TOKEN });
    await clocked.upload(another.id, Readable.from([Buffer.from('c\n')]), 1000);
    await server().backend.db.run('UPDATE storage_files SET expires = ? WHERE id = ?', [
      '2000-01-01T00:00:00.000Z',
      another.id,
    ]);
    assert.ok((await server().backend.purgeExpiredFiles()) >= 1);
    assert.equal(await bucket.store.head(fileKey(projectId, another.id)), undefined);
    assert.equal(await bucket.store.head(fileKey(projectId, kept.id)), 2);
  });
});
