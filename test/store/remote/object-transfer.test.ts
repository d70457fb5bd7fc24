import assert from 'node:assert/strict';
import { Readable, Writable } from 'node:stream';
import nock from 'nock';
import { UserError } from '../../../src/common/errors.js';
import type { Clock } from '../../../src/store/remote/retry-budget.js';
import { StorageApiClient } from '../../../src/store/remote/storage-api-client.js';
import { StorageFiles } from '../../../src/store/remote/storage-files.js';

const URL = 'http://storage.test';
const BUCKET = 'http://bucket.test';
const TOKEN = 'tok-secret-1';
const SIGNATURE = 'f00dfeedbeef0123456789';

function fakeClock(): Clock & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return { slept, now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)) };
}

/** A pre-signed address of the bucket as a gex server hands it out. */
const presigned = (path: string, extra = '') =>
  `${BUCKET}${path}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDSECRET%2F20261203%2Fus-east-1%2Fs3%2Faws4_request` +
  `&X-Amz-Date=20261203T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=content-length%3Bhost&X-Amz-Signature=${SIGNATURE}${extra}`;

const fileObject = (id: number, size: number | null, url = `${URL}/v2/storage/files/${id}/content`) => ({
  id,
  name: 'users.csv',
  url,
  provider: 'gex',
  sizeBytes: size,
});

function files(clock: Clock = fakeClock()): StorageFiles {
  const api = new StorageApiClient({ url: URL, token: TOKEN, maxRetries: 3, retryBaseMs: 1, clock });
  return new StorageFiles(api, URL);
}

const refused = (pattern: RegExp) => (e: unknown) => {
  assert.ok(e instanceof UserError, `a UserError, not ${String(e)}`);
  assert.match(e.message, pattern);
  assert.ok(!e.message.includes(SIGNATURE) && !e.message.includes('AKIDSECRET'), `no signature in: ${e.message}`);
  assert.ok(!e.message.includes(TOKEN));
  return true;
};

function sink(): Writable & { text: () => string } {
  const chunks: Buffer[] = [];
  const out = new Writable({
    write(chunk: Buffer, _e, done) {
      chunks.push(chunk);
      done();
    },
  });
  return Object.assign(out, { text: () => Buffer.concat(chunks).toString('utf8') });
}

const body = (text: string) => () => Readable.from([Buffer.from(text)]);

describe('uploads and downloads at pre-signed addresses of a gex server with its files in a bucket (nock)', () => {
  afterEach(() => nock.cleanAll());

  it('PUTs straight to the bucket with no token and the exact length, then completes on the server', async () => {
    const content = 'id,name\n1,a\n';
    let stored = '';
    const bucket = nock(BUCKET, { badheaders: ['x-storageapi-token'] })
      .put('/gex/projects/1/files/20')
      .query(true)
      .matchHeader('content-length', String(content.length))
      .reply(200, (_uri, b) => void (stored = String(b)), { etag: '"abc123"' });
    const server = nock(URL, { reqheaders: { 'x-storageapi-token': TOKEN } })
      .post('/v2/storage/files/prepare', (b: Record<string, unknown>) => b.sizeBytes === String(content.length))
      .reply(200, {
        ...fileObject(20, null),
        uploadParams: {
          method: 'PUT',
          direct: true,
          url: presigned('/gex/projects/1/files/20'),
          completeUrl: `${URL}/v2/storage/files/20/upload-complete`,
        },
      })
      .post(
        '/v2/storage/files/20/upload-complete',
        (b: unknown) => b === '' || b === undefined || b === null || typeof b === 'object',
      )
      .reply(200, fileObject(20, content.length));
    const file = await files().upload('users.csv', body(content), content.length);
    assert.equal(file.id, '20');
    assert.equal(file.sizeBytes, content.length);
    assert.equal(stored, content);
    assert.ok(bucket.isDone() && server.isDone());
  });

  it('sends a multipart upload part by part (a 503 part sent again), and completes with the ETags in order', async () => {
    const content = 'abcdefghij'.repeat(2) + 'xyz';
    const received = new Map<number, string>();
    const parts = [1, 2, 3].map((n) => ({
      partNumber: n,
      url: presigned('/gex/projects/1/files/21', `&partNumber=${n}&uploadId=u1`),
    }));
    const bucket = nock(BUCKET, { badheaders: ['x-storageapi-token'] });
    for (const n of [1, 2, 3]) {
      if (n === 2)
        bucket
          .put('/gex/projects/1/files/21')
          .query((q) => q.partNumber === '2')
          .reply(503, 'slow down');
      bucket
        .put('/gex/projects/1/files/21')
        .query((q) => q.partNumber === String(n))
        .reply(200, (_uri, b) => void received.set(n, String(b)), { etag: `"etag-${n}"` });
    }
    let completed: unknown;
    nock(URL)
      .post('/v2/storage/files/prepare')
      .reply(200, {
        ...fileObject(21, null),
        uploadParams: { method: 'MULTIPART', direct: true, partSize: 10, parts, completeUrl: `${URL}/x` },
      })
      .post('/v2/storage/files/21/upload-complete', (b: unknown) => {
        completed = b;
        return true;
      })
      .reply(200, fileObject(21, content.length));
    const clock = fakeClock();
    // the body arrives in pieces that do not line up with the parts
    const pieces = () =>
      Readable.from([content.slice(0, 7), content.slice(7, 15), content.slice(15)].map((t) => Buffer.from(t)));
    await files(clock).upload('big.csv', pieces, content.length);
    assert.deepEqual([...received.entries()].sort(), [
      [1, 'abcdefghij'],
      [2, 'abcdefghij'],
      [3, 'xyz'],
    ]);
    assert.deepEqual(completed, {
      parts: [
        { partNumber: 1, etag: '"etag-1"' },
        { partNumber: 2, etag: '"etag-2"' },
        { partNumber: 3, etag: '"etag-3"' },
      ],
    });
    assert.equal(clock.slept.length, 1, 'one wait before the part was sent again');
    assert.ok(bucket.isDone());
  });

  it('refuses upload addresses that are not pre-signed, parts that do not cover the file, other methods: nothing is sent', async () => {
    const bucket = nock(BUCKET).put(/.*/).query(true).reply(200, '');
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { method: 'PUT', direct: true, url: `${BUCKET}/gex/projects/1/files/22` },
        /other than a pre-signed http\(s\) address/,
      ],
      [
        { method: 'PUT', direct: true, url: 'file:///etc/passwd?X-Amz-Signature=1&X-Amz-Credential=2' },
        /pre-signed http\(s\)/,
      ],
      [
        { method: 'MULTIPART', direct: true, partSize: 10, parts: [{ partNumber: 1, url: presigned('/a') }] },
        /handed out 1 upload parts of 10 bytes for a file of 23 bytes \(3 expected\)/,
      ],
      [{ method: 'MULTIPART', direct: true, partSize: 0, parts: [] }, /partSize of 1 to/],
      [
        { method: 'MULTIPART', direct: true, partSize: 10, parts: [{ partNumber: 2, url: presigned('/a') }] },
        /numbered 1, 2/,
      ],
      [{ method: 'POST', direct: true, url: presigned('/a') }, /method PUT or MULTIPART/],
    ];
    for (const [uploadParams, pattern] of cases) {
      nock(URL)
        .post('/v2/storage/files/prepare')
        .reply(200, { ...fileObject(22, null), uploadParams });
      await assert.rejects(files().upload('x.csv', body('x'.repeat(23)), 23), refused(pattern));
    }
    assert.ok(!bucket.isDone(), 'no byte went to the bucket');
  });

  it('refuses a body longer than the size announced rather than cutting it, and one shorter than its parts', async () => {
    const parts = [1, 2].map((n) => ({
      partNumber: n,
      url: presigned('/gex/projects/1/files/28', `&partNumber=${n}`),
    }));
    nock(BUCKET).put('/gex/projects/1/files/28').query(true).times(2).reply(200, '', { etag: '"e"' });
    const prepared = {
      ...fileObject(28, null),
      uploadParams: { method: 'MULTIPART', direct: true, partSize: 10, parts },
    };
    nock(URL).post('/v2/storage/files/prepare').reply(200, prepared);
    const complete = nock(URL).post('/v2/storage/files/28/upload-complete').reply(200, fileObject(28, 20));
    await assert.rejects(
      files().upload('x.csv', body('y'.repeat(25)), 20),
      refused(/longer than the 20 bytes announced/),
    );
    nock(URL).post('/v2/storage/files/prepare').reply(200, prepared);
    nock(BUCKET).put('/gex/projects/1/files/28').query(true).reply(200, '', { etag: '"e"' });
    await assert.rejects(files().upload('x.csv', body('y'.repeat(8)), 20), refused(/ended after 1 of its 2 parts/));
    assert.ok(!complete.isDone(), 'nothing was completed');
  });

  it("a bucket's refusal is named without the address's signature; a 403 says to start again", async () => {
    nock(BUCKET)
      .put('/gex/projects/1/files/23')
      .query(true)
      .reply(
        403,
        '<?xml version="1.0"?><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message></Error>',
      );
    nock(URL)
      .post('/v2/storage/files/prepare')
      .reply(200, {
        ...fileObject(23, null),
        uploadParams: { method: 'PUT', direct: true, url: presigned('/gex/projects/1/files/23') },
      });
    await assert.rejects(
      files().upload('x.csv', body('abc'), 3),
      refused(
        /refused PUT http:\/\/bucket\.test\/gex\/projects\/1\/files\/23 \(403\): SignatureDoesNotMatch: The request signature.*start the upload again/,
      ),
    );
  });

  it('a completed file of another size than was sent is refused', async () => {
    nock(BUCKET).put('/gex/projects/1/files/24').query(true).reply(200, '', { etag: '"e"' });
    nock(URL)
      .post('/v2/storage/files/prepare')
      .reply(200, {
        ...fileObject(24, null),
        uploadParams: { method: 'PUT', direct: true, url: presigned('/gex/projects/1/files/24') },
      })
      .post('/v2/storage/files/24/upload-complete')
      .reply(200, fileObject(24, 2));
    await assert.rejects(files().upload('x.csv', body('abc'), 3), refused(/stored file 24 with 2 bytes; gex sent 3/));
  });

  it('downloads from a pre-signed address of the bucket without the token; an unsigned one elsewhere is refused', async () => {
    const bucket = nock(BUCKET, { badheaders: ['x-storageapi-token'] })
      .get('/gex/projects/1/files/25')
      .query(true)
      .reply(200, 'id\n1\n');
    const out = sink();
    const f = files();
    const bytes = await f.download(
      { id: '25', provider: 'gex', sizeBytes: 5, url: presigned('/gex/projects/1/files/25') },
      out,
    );
    assert.equal(bytes, 5);
    assert.equal(out.text(), 'id\n1\n');
    assert.ok(bucket.isDone());
    const elsewhere = nock(BUCKET).get(/.*/).reply(200, 'stolen');
    await assert.rejects(
      f.download({ id: '26', provider: 'gex', sizeBytes: 5, url: `${BUCKET}/gex/projects/1/files/26` }, sink()),
      refused(/download a file from another origin/),
    );
    assert.ok(!elsewhere.isDone());
    nock.cleanAll();
    // a missing object: the bucket's answer named, the signature not
    nock(BUCKET).get('/gex/projects/1/files/27').query(true).reply(404, '<Error><Code>NoSuchKey</Code></Error>');
    await assert.rejects(
      f.download({ id: '27', provider: 'gex', sizeBytes: 5, url: presigned('/gex/projects/1/files/27') }, sink()),
      refused(/refused GET http:\/\/bucket\.test\/gex\/projects\/1\/files\/27 \(404\): NoSuchKey/),
    );
  });
});
