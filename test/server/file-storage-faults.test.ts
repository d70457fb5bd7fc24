import assert from 'node:assert/strict';
import net from 'node:net';
import { DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3ObjectStore } from '../../src/store/files/object-store.js';
import { freshBucket, swiftOrSkip, swiftSettings, type Swift, type TestBucket } from '../support/object-store.js';
import { describeEachBackend, useTestServer, type Json, type TestServer } from '../support/storage-api-server.js';

const S = '/v2/storage';
const WRONG_SECRET = 'wrong-secret-d41c7a09e2';

async function finished(server: TestServer, id: number): Promise<Json> {
  for (let i = 0; i < 3000; i++) {
    const res = await server.get(`${S}/jobs/${id}`);
    if (res.body.status === 'success' || res.body.status === 'error') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`job ${id} did not finish`);
}

/** Empties and deletes the bucket behind gex's back. */
async function deleteBucket(bucket: TestBucket): Promise<void> {
  const page = await bucket.client.send(new ListObjectsV2Command({ Bucket: bucket.name }));
  for (const o of page.Contents ?? [])
    await bucket.client.send(new DeleteObjectCommand({ Bucket: bucket.name, Key: o.Key }));
  await bucket.client.send(new DeleteBucketCommand({ Bucket: bucket.name }));
}

/**
 * A TCP forwarder to Swift that counts the bytes it sends back and can be cut: an object store
 * that becomes unreachable in the middle of a read.
 */
class CuttableProxy {
  received = 0;
  private readonly sockets = new Set<net.Socket>();
  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(target: URL): Promise<CuttableProxy> {
    const holder: { proxy?: CuttableProxy } = {};
    const server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        holder.proxy?.sockets.add(s);
        s.on('error', () => undefined);
      }
      upstream.on('data', (d: Buffer) => holder.proxy && (holder.proxy.received += d.length));
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    holder.proxy = new CuttableProxy(server, (server.address() as net.AddressInfo).port);
    return holder.proxy;
  }

  /** Breaks every connection and refuses new ones. */
  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describeEachBackend('File Storage jobs and requests while the object store refuses or is gone', (backendFactory) => {
  const server = useTestServer({ backend: backendFactory });
  let swift: Swift;
  let bucket: TestBucket | undefined;
  let other: S3ObjectStore | undefined;

  beforeEach(async function () {
    this.timeout(30_000);
    swift = await swiftOrSkip(this);
    bucket = await freshBucket(swift, 'gex/');
    server().backend.storeFileBytesIn(bucket.store);
  });
  afterEach(async () => {
    // the server's own store goes back to the test bucket before the next test's
    other?.close();
    other = undefined;
    await bucket?.remove().catch(() => undefined);
    bucket = undefined;
  });

  /** A store on the same bucket with the wrong secret key (one attempt per request). */
  const wrongKey = () =>
    (other = new S3ObjectStore({
      ...swiftSettings(swift, bucket!.name, 'gex/'),
      credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: WRONG_SECRET },
      maxAttempts: 1,
    }));

  async function upload(content: string | Buffer, name = 'data.csv'): Promise<number> {
    const prepared = await server().post(`${S}/files/prepare`, { json: { name } });
    const put = await fetch(prepared.body.uploadParams.url, {
      method: 'PUT',
      headers: { 'X-StorageApi-Token': server().token },
      body: content,
    });
    assert.equal(put.status, 200, await put.text());
    return Number(prepared.body.id);
  }

  let tables = 0;
  /** A new table of two rows, loaded from a file while the bucket worked; its id. */
  async function tableOfTwoRows(): Promise<string> {
    const name = `t${++tables}`;
    await server().post(`${S}/buckets`, { json: { name: 'f', stage: 'in' } });
    const id = await upload('id,name\n1,Ann\n2,Bob\n');
    const started = await server().post(`${S}/buckets/in.c-f/tables-async`, { json: { name, dataFileId: id } });
    assert.equal(started.status, 202, started.text);
    const job = await finished(server(), started.body.id);
    assert.equal(job.status, 'success', JSON.stringify(job));
    return `in.c-f.${name}`;
  }

  async function rowsOf(tableId: string): Promise<string[][]> {
    const preview = await server().get(`${S}/tables/${tableId}/data-preview?format=json`);
    assert.equal(preview.status, 200, preview.text);
    return (preview.body.rows as Array<Array<{ value: string }>>).map((r) => r.map((c) => c.value)).sort();
  }

  function assertNoSecret(text: string): void {
    for (const secret of [WRONG_SECRET, swift.secretAccessKey]) assert.equal(text.includes(secret), false, text);
    assert.doesNotMatch(text, /X-Amz-Signature=[^*]/);
  }

  it('an import whose bucket refuses (wrong key, bucket deleted) ends error naming the cause; the table is unchanged', async function () {
    this.timeout(60_000);
    const table = await tableOfTwoRows();
    const next = await upload('id,name\n3,Cy\n');
    const importing = async () => {
      const started = await server().post(`${S}/tables/${table}/import-async`, {
        json: { dataFileId: next, incremental: true },
      });
      assert.equal(started.status, 202, started.text);
      return finished(server(), started.body.id);
    };

    server().backend.storeFileBytesIn(wrongKey());
    const refused = await importing();
    assert.equal(refused.status, 'error', JSON.stringify(refused));
    assert.equal(refused.error.code, 'storage.fileStorageUnavailable');
    assert.match(refused.error.message, new RegExp(`refused reading an object of s3://${bucket!.name}`));
    assert.match(refused.error.message, /the access key is unknown or the secret key is wrong/);
    assert.match(refused.error.message, new RegExp(swift.endpoint.replace(/[.:/]/g, '\\$&')));
    assertNoSecret(JSON.stringify(refused));
    assert.deepEqual(await rowsOf(table), [
      ['1', 'Ann'],
      ['2', 'Bob'],
    ]);

    server().backend.storeFileBytesIn(bucket!.store);
    await deleteBucket(bucket!);
    const gone = await importing();
    assert.equal(gone.status, 'error', JSON.stringify(gone));
    assert.match(gone.error.message, new RegExp(`there is no bucket ${bucket!.name}`));
    assert.equal((await server().get(`${S}/tables/${table}`)).body.rowsCount, 2);
  });

  it('an import whose object store becomes unreachable in the middle of the read ends error; the table is unchanged', async function () {
    this.timeout(60_000);
    const table = await tableOfTwoRows();
    // about 12 MB: still being read when the connection is cut
    const line = `${'x'.repeat(100)}\n`;
    const big = Buffer.from('id,name\n' + Array.from({ length: 120_000 }, (_, i) => `${i + 10},${line}`).join(''));
    const id = await upload(big, 'big.csv');
    const proxy = await CuttableProxy.start(new URL(swift.endpoint));
    const proxied = (other = new S3ObjectStore({
      ...swiftSettings(swift, bucket!.name, 'gex/'),
      endpoint: `http://127.0.0.1:${proxy.port}`,
      maxAttempts: 1,
    }));
    server().backend.storeFileBytesIn(proxied);
    const started = await server().post(`${S}/tables/${table}/import-async`, {
      json: { dataFileId: id, incremental: true },
    });
    assert.equal(started.status, 202, started.text);
    for (let i = 0; i < 2000 && proxy.received < 1_000_000; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.ok(proxy.received >= 1_000_000, `the read began (${proxy.received} bytes)`);
    await proxy.cut();
    const job = await finished(server(), started.body.id);
    assert.equal(job.status, 'error', JSON.stringify(job));
    assert.ok(proxy.received < big.length, 'cut before the whole object was read');
    assert.equal(job.error.code, 'storage.fileStorageUnavailable', JSON.stringify(job.error));
    assert.match(job.error.message, /cannot be reached while reading an object of s3:\/\//);
    assertNoSecret(JSON.stringify(job));
    assert.equal((await server().get(`${S}/tables/${table}`)).body.rowsCount, 2);
  });

  it('an export whose bucket refuses ends error naming the cause and leaves no file', async function () {
    this.timeout(60_000);
    const table = await tableOfTwoRows();
    const filesBefore = (await server().get(`${S}/files`)).body.length;
    server().backend.storeFileBytesIn(wrongKey());
    const started = await server().post(`${S}/tables/${table}/export-async`, { json: {} });
    assert.equal(started.status, 202, started.text);
    const job = await finished(server(), started.body.id);
    assert.equal(job.status, 'error', JSON.stringify(job));
    assert.equal(job.error.code, 'storage.fileStorageUnavailable');
    assert.match(job.error.message, /refused storing an object in s3:\/\/.*secret key is wrong/);
    assertNoSecret(JSON.stringify(job));
    server().backend.storeFileBytesIn(bucket!.store);
    assert.equal((await server().get(`${S}/files`)).body.length, filesBefore, 'the export left no file');
    await deleteBucket(bucket!);
    const again = await server().post(`${S}/tables/${table}/export-async`, { json: {} });
    const gone = await finished(server(), again.body.id);
    assert.equal(gone.status, 'error', JSON.stringify(gone));
    assert.match(gone.error.message, new RegExp(`there is no bucket ${bucket!.name}`));
  });

  it('answers an upload, a download and a delete while the bucket refuses with a 503 or success, never a 500', async () => {
    const kept = await upload('a\n1\n');
    for (const broken of ['wrong key', 'bucket deleted'] as const) {
      if (broken === 'wrong key') server().backend.storeFileBytesIn(wrongKey());
      else {
        server().backend.storeFileBytesIn(bucket!.store);
        await deleteBucket(bucket!);
      }
      const cause = broken === 'wrong key' ? /secret key is wrong/ : new RegExp(`there is no bucket ${bucket!.name}`);
      const prepared = await server().post(`${S}/files/prepare`, { json: { name: 'x.csv' } });
      const put = await fetch(prepared.body.uploadParams.url, {
        method: 'PUT',
        headers: { 'X-StorageApi-Token': server().token },
        body: 'a\n1\n',
      });
      const answer = (await put.json()) as { code: string; gexCode: string; error: string };
      assert.equal(put.status, 503, `${broken}: ${JSON.stringify(answer)}`);
      assert.equal(answer.code, 'storage.fileStorageUnavailable');
      assert.equal(answer.gexCode, 'GEX_OBJECT_STORE_REFUSED');
      assert.match(answer.error, cause, broken);
      assertNoSecret(JSON.stringify(answer));
      assert.equal((await server().get(`${S}/files/${prepared.body.id}`)).body.sizeBytes, null, broken);

      const download = await server().get(`${S}/files/${kept}/content`);
      assert.equal(download.status, 503, `${broken}: ${download.text}`);
      assert.match(download.body.error, cause);
      assertNoSecret(download.text);

      // the file is deleted with its row; its object goes with the bucket's next sweep
      const deleted = await server().delete(`${S}/files/${prepared.body.id}`);
      assert.equal(deleted.status, 204, `${broken}: ${deleted.text}`);
      const listed = await server().get(`${S}/files`);
      assert.equal(listed.status, 200, listed.text);
    }
  });
});
