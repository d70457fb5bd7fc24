import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { fileKey } from '../../src/store/files/object-store.js';
import {
  DIRECT_PUT_MAX,
  MIN_DIRECT_PART,
  PUT_URL_SECONDS,
  directPartCount,
  directPartSize,
} from '../../src/store/files/project-files.js';
import { freshBucket, swiftOrSkip, type Swift, type TestBucket } from '../support/object-store.js';
import { describeEachBackend, useTestServer, type Json, type TestServer } from '../support/storage-api-server.js';

const S = '/v2/storage';
const LIMIT = 100 * 1024 * 1024;

async function finished(server: TestServer, job: Json): Promise<Json> {
  for (;;) {
    const res = await server.get(`${S}/jobs/${job.id}`);
    if (res.body.status === 'success' || res.body.status === 'error') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A PUT to a pre-signed address with no token: what the bucket answers. */
async function putDirect(
  url: string,
  body: Uint8Array,
): Promise<{ status: number; etag: string | null; text: string }> {
  const response = await fetch(url, { method: 'PUT', body });
  return { status: response.status, etag: response.headers.get('etag'), text: await response.text() };
}

/** The signature of a pre-signed address, to be sure it is shown nowhere else. */
function signatureOf(url: string): string {
  const signature = new URL(url).searchParams.get('X-Amz-Signature');
  assert.ok(signature && signature.length >= 32, `a SigV4 signature in ${url.replace(/Signature=[^&]*/, '…')}`);
  return signature;
}

describe('File Storage: the parts of a direct multipart upload', () => {
  it('sizes parts so that at most 1000 are answered', () => {
    assert.equal(directPartSize(40_000_000), MIN_DIRECT_PART);
    assert.equal(directPartCount(40_000_000), 3);
    const fiveGiB = 5 * 1024 ** 3;
    assert.equal(directPartCount(fiveGiB), 320);
    const tenTb = 10 * 1000 ** 4;
    assert.equal(directPartSize(tenTb), 10_000_000_000);
    assert.equal(directPartCount(tenTb), 1000);
    assert.ok(directPartCount(tenTb + 1) <= 1000);
  });
});

describe('File Storage: the uploadParams of a database store are unchanged', () => {
  const server = useTestServer();

  it('answers a PUT to the server whatever sizeBytes says, and upload-complete only for an uploaded file', async () => {
    const prepared = await server().post(`${S}/files/prepare`, { json: { name: 'a.csv', sizeBytes: 'not-a-size' } });
    assert.equal(prepared.status, 200, prepared.text);
    assert.deepEqual(prepared.body.uploadParams, {
      url: `${server().baseUrl}${S}/files/${prepared.body.id}/content`,
      method: 'PUT',
    });
    const early = await server().post(`${S}/files/${prepared.body.id}/upload-complete`);
    assert.equal(early.status, 400, early.text);
    assert.match(early.body.error, /was not prepared for a direct upload/);
    const put = await server().put(`${S}/files/${prepared.body.id}/content`, { body: 'a\n1\n' });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.url, `${server().baseUrl}${S}/files/${prepared.body.id}/content`);
    const done = await server().post(`${S}/files/${prepared.body.id}/upload-complete`);
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.sizeBytes, 4);
  });
});

describeEachBackend('File Storage: direct uploads to the bucket and pre-signed downloads', (backendFactory) => {
  const server = useTestServer({ backend: backendFactory, fileLimit: LIMIT });
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

  const prepare = async (sizeBytes: unknown, name = 'data.csv'): Promise<Json> => {
    const prepared = await server().post(`${S}/files/prepare`, { json: { name, sizeBytes } });
    assert.equal(prepared.status, 200, prepared.text);
    return prepared.body;
  };
  const complete = (id: number, body?: unknown) =>
    server().post(`${S}/files/${id}/upload-complete`, body === undefined ? {} : { json: body });

  it('takes a direct PUT of exactly sizeBytes, completes it once, and answers a pre-signed GET of it', async () => {
    const content = Buffer.from('id,name\n1,Ann\n2,"Bob, Jr."\n');
    const before = Date.now();
    const file = await prepare(content.length);
    const params = file.uploadParams;
    assert.equal(params.method, 'PUT');
    assert.equal(params.direct, true);
    assert.equal(params.completeUrl, `${server().baseUrl}${S}/files/${file.id}/upload-complete`);
    assert.ok(params.url.startsWith(`${swift.endpoint}/${bucket.name}/files/${fileKey(projectId, file.id)}?`));
    assert.equal(new URL(params.url).searchParams.get('X-Amz-Expires'), String(PUT_URL_SECONDS));
    const expires = Date.parse(params.expiresAt);
    assert.ok(expires >= before + PUT_URL_SECONDS * 1000 - 1000 && expires <= Date.now() + PUT_URL_SECONDS * 1000);
    // the file itself, not uploaded yet: the server's address, no size
    assert.equal(file.url, `${server().baseUrl}${S}/files/${file.id}/content`);
    assert.equal(file.sizeBytes, null);

    assert.equal((await putDirect(params.url, content)).status, 200);
    assert.equal((await server().get(`${S}/files/${file.id}`)).body.sizeBytes, null, 'not complete before the call');
    const done = await complete(file.id);
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.id, file.id);
    assert.equal(done.body.sizeBytes, content.length);
    assert.equal(done.body.provider, 'gex');
    assert.equal(done.body.uploadParams, undefined);
    signatureOf(done.body.url);
    assert.equal(new URL(done.body.url).searchParams.get('X-Amz-Expires'), '3600');
    // the pre-signed GET needs no token; the server's content address still streams it
    const fromBucket = await fetch(done.body.url);
    assert.equal(fromBucket.status, 200);
    assert.deepEqual(Buffer.from(await fromBucket.arrayBuffer()), content);
    const fromServer = await fetch(`${server().baseUrl}${S}/files/${file.id}/content`, {
      headers: { 'X-StorageApi-Token': server().token },
    });
    assert.deepEqual(Buffer.from(await fromServer.arrayBuffer()), content);
    // a second complete answers the file as it is
    const again = await complete(file.id);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.sizeBytes, content.length);
    // detail and list name the bucket's pre-signed address too
    const detail = await server().get(`${S}/files/${file.id}`);
    assert.equal(new URL(detail.body.url).pathname, `/${bucket.name}/files/${fileKey(projectId, file.id)}`);
    const listed = (await server().get(`${S}/files`)).body.find((f: Json) => f.id === file.id);
    signatureOf(listed.url);
    // a read-only token cannot complete
    const readOnly = await server().createToken({ readOnly: true });
    assert.equal((await server().post(`${S}/files/${file.id}/upload-complete`, { token: readOnly })).status, 403);
  });

  it('refuses a direct PUT of another size at the bucket, and a complete of an object of another size', async () => {
    const file = await prepare(10);
    const short = await putDirect(file.uploadParams.url, Buffer.from('12345'));
    assert.equal(short.status, 403, `the bucket refuses a length the address was not signed for: ${short.text}`);
    const nothing = await complete(file.id);
    assert.equal(nothing.status, 400, nothing.text);
    assert.equal(nothing.body.code, 'storage.files.notUploaded');
    assert.match(nothing.body.error, /has no bytes in s3:\/\/.* yet: PUT its 10 bytes/);
    // an object of another size got there anyway (written behind gex's back): dropped, the file stays prepared
    const key = fileKey(projectId, file.id);
    await bucket.store.putStream(key, Readable.from([Buffer.from('12345')]));
    const wrong = await complete(file.id);
    assert.equal(wrong.status, 400, wrong.text);
    assert.equal(wrong.body.code, 'storage.files.validation');
    assert.match(wrong.body.error, /prepared with sizeBytes 10, but its upload has 5 bytes; it was dropped/);
    assert.equal(await bucket.store.head(key), undefined);
    assert.equal((await server().get(`${S}/files/${file.id}`)).body.sizeBytes, null);
    // the same address then takes the right size
    assert.equal((await putDirect(file.uploadParams.url, Buffer.from('0123456789'))).status, 200);
    assert.equal((await complete(file.id)).body.sizeBytes, 10);
  });

  it('completes a multipart upload of ~40 MB in 3 pre-signed parts, refusing hostile parts first', async function () {
    this.timeout(60_000);
    const size = 40_000_000;
    assert.ok(size > DIRECT_PUT_MAX);
    const content = randomBytes(size);
    const file = await prepare(size, 'big.bin');
    const params = file.uploadParams;
    assert.equal(params.method, 'MULTIPART');
    assert.equal(params.direct, true);
    assert.equal(params.url, undefined);
    assert.equal(params.partSize, MIN_DIRECT_PART);
    assert.deepEqual(
      params.parts.map((p: Json) => p.partNumber),
      [1, 2, 3],
    );
    const parts: Array<{ partNumber: number; etag: string }> = [];
    for (const part of params.parts) {
      const start = (part.partNumber - 1) * params.partSize;
      const sent = await putDirect(part.url, content.subarray(start, start + params.partSize));
      assert.equal(sent.status, 200, sent.text);
      assert.ok(sent.etag);
      parts.push({ partNumber: part.partNumber, etag: sent.etag });
    }
    // hostile or wrong bodies: 400 naming parts, nothing completed
    const hostile: Array<[string, unknown, RegExp]> = [
      ['no parts', {}, /is uploaded in 3 parts: send parts/],
      ['not a list', { parts: 'x' }, /expected a list/],
      ['not objects', { parts: [1, 2] }, /part 1 of the list is not an object/],
      ['part 0', { parts: [{ partNumber: 0, etag: 'a' }] }, /partNumber must be a whole number from 1 to 1000/],
      ['a fraction', { parts: [{ partNumber: 1.5, etag: 'a' }] }, /partNumber must be a whole number/],
      ['huge', { parts: [{ partNumber: 1e30, etag: 'a' }] }, /partNumber must be a whole number/],
      ['twice', { parts: [parts[0], parts[0]] }, /partNumber 1 is listed twice/],
      ['no etag', { parts: [{ partNumber: 1 }] }, /etag must be the ETag its PUT answered/],
      ['a long etag', { parts: [{ partNumber: 1, etag: 'a'.repeat(201) }] }, /etag must be/],
      ['an unsafe etag', { parts: [{ partNumber: 1, etag: 'a\r\nX-Evil: 1' }] }, /etag must be/],
      ['markup', { parts: [{ partNumber: 1, etag: '<x>' }] }, /etag must be/],
      [
        'too many',
        { parts: Array.from({ length: 1001 }, (_, i) => ({ partNumber: i + 1, etag: 'a' })) },
        /at most 1000 parts/,
      ],
      ['more than prepared', { parts: [...parts, { partNumber: 4, etag: 'a' }] }, /prepared for 3 parts/],
      ['a number past them', { parts: [{ partNumber: 7, etag: parts[0].etag }] }, /prepared for 3 parts/],
    ];
    for (const [what, body, message] of hostile) {
      const refused = await complete(file.id, body);
      assert.equal(refused.status, 400, `${what}: ${refused.text}`);
      assert.match(refused.body.error, message, what);
    }
    // an ETag the bucket never answered: the bucket refuses, named as such, the file stays prepared
    const wrongEtag = await complete(file.id, { parts: [parts[0], parts[1], { partNumber: 3, etag: '"0123abcd"' }] });
    assert.equal(wrongEtag.status, 400, wrongEtag.text);
    assert.match(wrongEtag.body.error, /The bucket refused completing the upload of File \d+/);
    assert.doesNotMatch(wrongEtag.text, new RegExp(signatureOf(params.parts[0].url)));
    assert.equal(wrongEtag.text.includes(swift.secretAccessKey), false);
    assert.equal((await server().get(`${S}/files/${file.id}`)).body.sizeBytes, null);

    const done = await complete(file.id, { parts: [...parts].reverse() });
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.sizeBytes, size);
    assert.equal(await bucket.store.head(fileKey(projectId, file.id)), size);
    const downloaded = Buffer.from(await (await fetch(done.body.url)).arrayBuffer());
    assert.equal(
      createHash('sha256').update(downloaded).digest('hex'),
      createHash('sha256').update(content).digest('hex'),
    );
    // idempotent: the spent upload is not completed again
    assert.equal((await complete(file.id, { parts })).body.sizeBytes, size);
  });

  it('completes a multipart upload the bucket completed before (a complete that died before marking the file)', async function () {
    this.timeout(30_000);
    const size = DIRECT_PUT_MAX + 1;
    const file = await prepare(size, 'crashed.bin');
    const content = new Uint8Array(size).fill(7);
    const parts: Array<{ partNumber: number; etag: string }> = [];
    for (const part of file.uploadParams.parts) {
      const start = (part.partNumber - 1) * file.uploadParams.partSize;
      const sent = await putDirect(part.url, content.subarray(start, start + file.uploadParams.partSize));
      assert.equal(sent.status, 200, sent.text);
      parts.push({ partNumber: part.partNumber, etag: sent.etag! });
    }
    const row = await server().backend.db.get<{ upload_id: string }>(
      'SELECT upload_id FROM storage_files WHERE id = ?',
      [file.id],
    );
    await bucket.store.completeMultipart(fileKey(projectId, file.id), row!.upload_id, parts);
    // Swift (like AWS) takes a repeated complete; a store that refuses it (NoSuchUpload) is met with
    // an ETag it refuses here: the object of the prepared size is what counts
    const done = await complete(file.id, { parts: [parts[0], parts[1], { partNumber: 3, etag: '"0123abcd"' }] });
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.sizeBytes, size);
  });

  it('completes a plain direct PUT when a table import needs the file; one never uploaded stays unimportable', async () => {
    const content = Buffer.from('id,name\n1,Ann\n2,Bob\n');
    const file = await prepare(String(content.length));
    const missing = await prepare(content.length, 'missing.csv');
    await server().post(`${S}/buckets`, { json: { name: 'b', stage: 'in' } });
    const refused = await server().post(`${S}/buckets/in.c-b/tables-async`, {
      json: { name: 't', dataFileId: missing.id },
    });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.code, 'storage.files.notUploaded');

    assert.equal((await putDirect(file.uploadParams.url, content)).status, 200);
    assert.equal((await server().get(`${S}/files/${file.id}`)).body.sizeBytes, null);
    const started = await server().post(`${S}/buckets/in.c-b/tables-async`, {
      json: { name: 't', dataFileId: file.id },
    });
    assert.equal(started.status, 202, started.text);
    const job = await finished(server(), started.body);
    assert.equal(job.status, 'success', JSON.stringify(job));
    assert.equal((await server().get(`${S}/tables/in.c-b.t`)).body.rowsCount, 2);
    const detail = await server().get(`${S}/files/${file.id}`);
    assert.equal(detail.body.sizeBytes, content.length);
    signatureOf(detail.body.url);
    // a download completes it the same way
    const other = await prepare(content.length, 'other.csv');
    assert.equal((await putDirect(other.uploadParams.url, content)).status, 200);
    const download = await fetch(`${server().baseUrl}${S}/files/${other.id}/content`, {
      headers: { 'X-StorageApi-Token': server().token },
    });
    assert.equal(download.status, 200);
    assert.equal(await download.text(), content.toString());
  });

  it("takes the server's own PUT of a file prepared for a direct upload only with its sizeBytes", async () => {
    const file = await prepare(4);
    const wrong = await server().put(`${S}/files/${file.id}/content`, { body: 'a\n1\n2\n' });
    assert.equal(wrong.status, 400, wrong.text);
    assert.match(wrong.body.error, /prepared with sizeBytes 4, but the upload sends 6 bytes/);
    const chunked = (text: string) =>
      fetch(`${server().baseUrl}${S}/files/${file.id}/content`, {
        method: 'PUT',
        headers: { 'X-StorageApi-Token': server().token },
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(text));
            controller.close();
          },
        }),
        duplex: 'half',
      });
    for (const text of ['a\n1\n2\n', 'a\n']) {
      const refused = await chunked(text);
      const answer = await refused.text();
      assert.equal(refused.status, 400, answer);
      assert.match(answer, /prepared with sizeBytes 4, but the upload sends (more than 4|2) bytes/);
      assert.equal(await bucket.store.head(fileKey(projectId, file.id)), undefined);
    }
    const right = await server().put(`${S}/files/${file.id}/content`, { body: 'a\n1\n' });
    assert.equal(right.status, 200, right.text);
    assert.equal(right.body.sizeBytes, 4);
    signatureOf(right.body.url);
    // a multipart upload prepared and not used goes when the server takes the bytes
    const big = await prepare(DIRECT_PUT_MAX + 1, 'big.bin');
    const listUploads = async () =>
      (await bucket.client.send(new ListMultipartUploadsCommand({ Bucket: bucket.name }))).Uploads ?? [];
    assert.equal((await listUploads()).length, 1);
    const sent = await fetch(`${server().baseUrl}${S}/files/${big.id}/content`, {
      method: 'PUT',
      headers: { 'X-StorageApi-Token': server().token },
      body: new Uint8Array(DIRECT_PUT_MAX + 1),
    });
    assert.equal(sent.status, 200, await sent.text());
    assert.equal((await listUploads()).length, 0);
    assert.equal((await complete(big.id)).body.sizeBytes, DIRECT_PUT_MAX + 1);
    // deleting a file prepared for parts drops its upload too
    const dropped = await prepare(DIRECT_PUT_MAX + 1, 'dropped.bin');
    assert.equal((await listUploads()).length, 1);
    assert.equal((await server().delete(`${S}/files/${dropped.id}`)).status, 204);
    assert.equal((await listUploads()).length, 0);
  });

  it('refuses a sizeBytes that is not a whole number (400) or over the limit (413); 0 bytes go directly', async () => {
    for (const bad of [-1, 1.5, 'abc', '1e3', [1]]) {
      const res = await server().post(`${S}/files/prepare`, { json: { name: 'x.csv', sizeBytes: bad } });
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`);
      assert.match(res.body.error, /sizeBytes/);
    }
    const big = await server().post(`${S}/files/prepare`, { json: { name: 'x.csv', sizeBytes: LIMIT + 1 } });
    assert.equal(big.status, 413, big.text);
    assert.equal(big.body.code, 'storage.files.tooLarge');
    // without sizeBytes: through the server, as before
    const plain = await server().post(`${S}/files/prepare`, { json: { name: 'x.csv' } });
    assert.deepEqual(plain.body.uploadParams, {
      url: `${server().baseUrl}${S}/files/${plain.body.id}/content`,
      method: 'PUT',
    });
    const empty = await prepare(0, 'empty.csv');
    assert.equal(empty.uploadParams.method, 'PUT');
    assert.equal((await putDirect(empty.uploadParams.url, new Uint8Array(0))).status, 200);
    assert.equal((await complete(empty.id)).body.sizeBytes, 0);
  });
});
