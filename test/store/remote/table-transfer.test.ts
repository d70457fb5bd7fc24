import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import nock from 'nock';
import { UserError } from '../../../src/common/errors.js';
import { fromPlain } from '../../../src/json/index.js';
import { CsvRecordCount } from '../../../src/store/remote/csv-record-count.js';
import type { Clock } from '../../../src/store/remote/retry-budget.js';
import { StorageApiClient } from '../../../src/store/remote/storage-api-client.js';
import { JOB_POLL_MAX_MS, waitForJob } from '../../../src/store/remote/storage-job-wait.js';
import { TableTransfer } from '../../../src/store/remote/table-transfer.js';

const URL = 'http://storage.test';
const TOKEN = 'tok-1';

function fakeClock(): Clock & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return { slept, now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)) };
}

const userError = (pattern: RegExp, code?: string) => (e: unknown) => {
  assert.ok(e instanceof UserError, `a UserError, not ${String(e)}`);
  assert.match(e.message, pattern);
  if (code) assert.equal(e.gexCode, code);
  return true;
};

const fileObject = (id: number, size: number | null) => ({
  id,
  created: '2026-01-01T00:00:00+0000',
  isPublic: false,
  isSliced: false,
  isEncrypted: false,
  name: 'users.csv',
  url: `${URL}/v2/storage/files/${id}/content`,
  provider: 'gex',
  region: '',
  sizeBytes: size,
  tags: [],
  maxAgeDays: 15,
  runId: null,
  runIds: [],
  creatorToken: { id: '1', description: 't' },
});

const job = (id: number, status: string, extra: Record<string, unknown> = {}) => ({
  id,
  status,
  url: `${URL}/v2/storage/jobs/${id}`,
  tableId: 'in.c-shop.users',
  operationName: 'tableImport',
  results: null,
  error: null,
  ...extra,
});

/** A transfer on `clock`; `apiClock`: the client's retries too (else they wait in real time). */
function transfer(clock: Clock = fakeClock(), apiClock?: Clock): TableTransfer {
  const api = new StorageApiClient({ url: URL, token: TOKEN, maxRetries: 1, retryBaseMs: 1, clock: apiClock });
  return new TableTransfer({ api, url: URL, clock });
}

/** A Writable collecting text. */
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

describe('table transfer over a gex server: files and storage jobs (nock)', () => {
  let dir: string;
  let csv: string;
  const content = '"id","name"\n"1","a ""b"""\n"2","multi\nline"\n';

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-transfer-'));
    csv = path.join(dir, 'users.csv');
    await writeFile(csv, content);
  });
  after(() => rm(dir, { recursive: true, force: true }));
  afterEach(() => nock.cleanAll());

  it('creates a missing table: bucket, prepare, PUT with Content-Length, tables-async, job polled with back-off', async () => {
    const clock = fakeClock();
    let uploaded = '';
    let created: Record<string, unknown> = {};
    const scope = nock(URL, { reqheaders: { 'x-storageapi-token': TOKEN } })
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(404, { error: 'The table "in.c-shop.users" was not found.', code: 'storage.tables.notFound' })
      .get('/v2/storage/buckets/in.c-shop')
      .reply(404, { error: 'Bucket in.c-shop not found', code: 'storage.buckets.notFound' })
      .post('/v2/storage/buckets', { name: 'shop', stage: 'in' })
      .reply(201, { id: 'in.c-shop' })
      .post(
        '/v2/storage/files/prepare',
        (b: Record<string, unknown>) => b.name === 'users.csv' && b.sizeBytes === String(content.length),
      )
      .reply(200, { ...fileObject(7, null), uploadParams: { url: `${URL}/v2/storage/files/7/content`, method: 'PUT' } })
      .put('/v2/storage/files/7/content')
      .matchHeader('content-length', String(Buffer.byteLength(content)))
      .reply(200, (_uri, body) => {
        uploaded = String(body);
        return fileObject(7, Buffer.byteLength(content));
      })
      .post('/v2/storage/buckets/in.c-shop/tables-async', (b: Record<string, unknown>) => {
        created = b;
        return true;
      })
      .reply(202, job(90, 'waiting'))
      .get('/v2/storage/jobs/90')
      .reply(200, job(90, 'processing'))
      .get('/v2/storage/jobs/90')
      .reply(200, job(90, 'success', { results: { id: 'in.c-shop.users' } }))
      .delete('/v2/storage/files/7')
      .reply(204);
    const result = await transfer(clock).load(csv, { destination: 'in.c-shop.users', primary_key: ['id'] });
    assert.deepEqual(result, { tableId: 'in.c-shop.users', rowsInFile: 2, tableCreated: true, columnsAdded: [] });
    assert.equal(uploaded, content, 'the bytes as they are');
    assert.deepEqual(created, { dataFileId: '7', delimiter: ',', enclosure: '"', primaryKey: 'id', name: 'users' });
    assert.deepEqual(clock.slept, [50, 75], 'waits grow between polls');
    assert.ok(scope.isDone());
  });

  it("PUTs a file again after a busy server's 503, waiting its Retry-After; a 503 past the retries fails", async () => {
    const clock = fakeClock();
    const busy = {
      error:
        'The server is already holding 64 MiB of uploads for other requests (gex serve --max-upload-memory). Retry in a few seconds: the file stays prepared, PUT it again.',
      code: 'storage.files.uploadCapacity',
      status: 'error',
      gexCode: 'GEX_SERVER_BUSY',
    };
    const sent: string[] = [];
    const scope = nock(URL)
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(200, { id: 'in.c-shop.users' })
      .post('/v2/storage/files/prepare')
      .reply(200, { ...fileObject(5, null), uploadParams: { url: `${URL}/v2/storage/files/5/content`, method: 'PUT' } })
      .put('/v2/storage/files/5/content')
      .reply(503, (_uri, body) => (sent.push(String(body)), busy), { 'Retry-After': '5' })
      .put('/v2/storage/files/5/content')
      .reply(200, (_uri, body) => (sent.push(String(body)), fileObject(5, Buffer.byteLength(content))))
      .post('/v2/storage/tables/in.c-shop.users/import-async')
      .reply(202, job(92, 'success', { results: { totalRowsCount: 2 } }))
      .delete('/v2/storage/files/5')
      .reply(204);
    const result = await transfer(clock, clock).load(csv, { destination: 'in.c-shop.users' });
    assert.equal(result.rowsInFile, 2, 'the records of the attempt that was taken');
    assert.deepEqual(sent, [content, content], 'the whole file, twice');
    assert.deepEqual(clock.slept, [5000], 'the wait its Retry-After asked for');
    assert.ok(scope.isDone());

    // still busy after the retries (one here): the run fails naming the server's answer
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(200, { id: 'in.c-shop.users' })
      .post('/v2/storage/files/prepare')
      .reply(200, { ...fileObject(6, null), uploadParams: { url: `${URL}/v2/storage/files/6/content`, method: 'PUT' } })
      .put('/v2/storage/files/6/content')
      .twice()
      .reply(503, busy, { 'Retry-After': '5' })
      .delete('/v2/storage/files/6')
      .reply(204);
    await assert.rejects(
      transfer(clock, clock).load(csv, { destination: 'in.c-shop.users' }),
      /\[503\] The server is already holding 64 MiB of uploads/,
    );
  });

  it('imports into an existing table: incremental, delete_where, new columns; a headless file gets its header', async () => {
    await writeFile(path.join(dir, 'headless.csv'), '1,x\n2,y\n');
    let uploaded = '';
    let fields: Record<string, unknown> = {};
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(200, { id: 'in.c-shop.users' })
      .post('/v2/storage/files/prepare')
      .reply(200, { ...fileObject(8, null), uploadParams: { url: `${URL}/v2/storage/files/8/content`, method: 'PUT' } })
      .put('/v2/storage/files/8/content')
      .reply(200, (_uri, body) => {
        uploaded = String(body);
        return fileObject(8, uploaded.length);
      })
      .post('/v2/storage/tables/in.c-shop.users/import-async', (b: Record<string, unknown>) => {
        fields = b;
        return true;
      })
      .reply(202, job(91, 'success', { results: { newColumns: ['email'], totalRowsCount: 10 } }))
      .delete('/v2/storage/files/8')
      .reply(204);
    const result = await transfer().load(path.join(dir, 'headless.csv'), {
      destination: 'in.c-shop.users',
      incremental: true,
      columns: ['id', 'email'],
      delete_where_column: 'id',
      delete_where_values: ['1'],
    });
    assert.equal(uploaded, '"id","email"\n1,x\n2,y\n');
    assert.deepEqual(fields, {
      dataFileId: '8',
      delimiter: ',',
      enclosure: '"',
      incremental: '1',
      deleteWhereColumn: 'id',
      deleteWhereValues: ['1'],
      deleteWhereOperator: 'eq',
    });
    assert.deepEqual(result, {
      tableId: 'in.c-shop.users',
      rowsInFile: 2,
      tableCreated: false,
      columnsAdded: ['email'],
    });
  });

  it("a failed job is a user error naming the table and the server's message; the file is deleted", async () => {
    const scope = nock(URL)
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(200, { id: 'in.c-shop.users' })
      .post('/v2/storage/files/prepare')
      .reply(200, { ...fileObject(9, null), uploadParams: { url: `${URL}/v2/storage/files/9/content`, method: 'PUT' } })
      .put('/v2/storage/files/9/content')
      .reply(200, fileObject(9, content.length))
      .post('/v2/storage/tables/in.c-shop.users/import-async')
      .reply(202, job(92, 'processing'))
      .get('/v2/storage/jobs/92')
      .reply(
        200,
        job(92, 'error', {
          error: {
            code: 'storage.tables.validation',
            message: 'The table in.c-shop.users has primary key id; the import asks for key no',
          },
        }),
      )
      .delete('/v2/storage/files/9')
      .reply(204);
    await assert.rejects(
      transfer().load(csv, { destination: 'in.c-shop.users', primary_key: ['no'] }),
      userError(
        /failed loading users\.csv into table "?in\.c-shop\.users"? \(job "?92"?\): The table in\.c-shop\.users has primary key id; the import asks for key no/,
        'GEX_TABLE_LOAD_REFUSED',
      ),
    );
    assert.ok(scope.isDone(), 'the uploaded file was deleted after the failure');
  });

  it('refuses an upload address of another origin: no byte and no token go there', async () => {
    const elsewhere = nock('http://bucket.elsewhere.test').put(/.*/).reply(200, {});
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(200, { id: 'in.c-shop.users' })
      .post('/v2/storage/files/prepare')
      .reply(200, {
        ...fileObject(10, null),
        uploadParams: { url: 'http://bucket.elsewhere.test/upload?sig=1', method: 'PUT' },
      });
    await assert.rejects(
      transfer().load(csv, { destination: 'in.c-shop.users' }),
      userError(
        /asked gex to upload a file to another origin, http:\/\/bucket\.elsewhere\.test/,
        'GEX_STORAGE_API_REFUSED',
      ),
    );
    assert.ok(!elsewhere.isDone(), 'nothing was sent to the other origin');
  });

  it("refuses a stack whose files are not the server's own (provider aws)", async () => {
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(200, { id: 'in.c-shop.users' })
      .post('/v2/storage/files/prepare')
      .reply(200, { ...fileObject(11, null), provider: 'aws', uploadParams: { url: `${URL}/x`, method: 'PUT' } });
    await assert.rejects(transfer().load(csv, { destination: 'in.c-shop.users' }), userError(/provider "?aws"?/));
  });

  it('a 413 of the upload is a refusal naming the file and its size', async () => {
    nock(URL)
      .get('/v2/storage/tables/in.c-shop.users')
      .reply(200, { id: 'in.c-shop.users' })
      .post('/v2/storage/files/prepare')
      .reply(200, {
        ...fileObject(12, null),
        uploadParams: { url: `${URL}/v2/storage/files/12/content`, method: 'PUT' },
      })
      .put('/v2/storage/files/12/content')
      .reply(413, {
        error: "The file is larger than this server's limit of 10 bytes.",
        code: 'storage.files.tooLarge',
      });
    await assert.rejects(
      transfer().load(csv, { destination: 'in.c-shop.users' }),
      userError(
        new RegExp(
          `refused uploading users\\.csv \\(${content.length} bytes\\) \\(413\\): The file is larger than this server's limit of 10 bytes`,
        ),
        'GEX_STORAGE_API_REFUSED',
      ),
    );
  });

  it('a job still running after the time limit is given up on, naming it', async () => {
    const clock = fakeClock();
    const api = new StorageApiClient({ url: URL, token: TOKEN, maxRetries: 0 });
    nock(URL).get('/v2/storage/jobs/5').times(100).reply(200, job(5, 'processing'));
    await assert.rejects(
      waitForJob(fromPlain(job(5, 'waiting')), {
        api,
        clock,
        url: URL,
        doing: 'importing x',
        failure: 'GEX_TABLE_LOAD_REFUSED',
        timeoutMs: 60_000,
      }),
      userError(/still importing x after 60 s \(job "?5"?, processing\)/),
    );
    assert.ok(clock.slept.every((ms) => ms <= JOB_POLL_MAX_MS));
    assert.equal(Math.max(...clock.slept), JOB_POLL_MAX_MS, 'the wait is capped');
  });

  it('a job whose id is not a number is refused before it becomes a URL', async () => {
    const api = new StorageApiClient({ url: URL, token: TOKEN, maxRetries: 0 });
    await assert.rejects(
      waitForJob(fromPlain({ id: '../tokens', status: 'waiting' }), {
        api,
        clock: fakeClock(),
        url: URL,
        doing: 'importing x',
        failure: 'GEX_TABLE_LOAD_REFUSED',
      }),
      userError(/something other than a job with a numeric id/),
    );
  });

  it('exports through export-async: the file downloaded streamed, rows counted, the file deleted', async () => {
    let fields: Record<string, unknown> = {};
    const scope = nock(URL)
      .post('/v2/storage/tables/in.c-shop.users/export-async', (b: Record<string, unknown>) => {
        fields = b;
        return true;
      })
      .reply(202, job(93, 'waiting', { operationName: 'tableExport' }))
      .get('/v2/storage/jobs/93')
      .reply(200, job(93, 'success', { results: { file: { id: 14 } } }))
      .get('/v2/storage/files/14')
      .reply(200, fileObject(14, content.length))
      .get('/v2/storage/files/14/content')
      .matchHeader('x-storageapi-token', TOKEN)
      .reply(200, content, { 'content-type': 'text/csv' })
      .delete('/v2/storage/files/14')
      .reply(204);
    const out = sink();
    const result = await transfer().exportTable(
      'in.c-shop.users',
      { columns: ['id', 'name'], whereColumn: 'id', whereValues: ['1', '2'], whereOperator: 'eq', limit: 5 },
      out,
    );
    assert.deepEqual(fields, {
      limit: '5',
      whereColumn: 'id',
      whereValues: ['1', '2'],
      whereOperator: 'eq',
      columns: ['id', 'name'],
    });
    assert.equal(out.text(), content);
    assert.deepEqual(result, { rows: 2, bytes: content.length });
    assert.ok(scope.isDone());
  });

  it('refuses a file url of another origin: the token is not sent there', async () => {
    const elsewhere = nock('http://files.elsewhere.test').get(/.*/).reply(200, 'stolen');
    nock(URL)
      .post('/v2/storage/tables/in.c-shop.users/export-async')
      .reply(202, job(94, 'success', { results: { file: { id: 15 } } }))
      .get('/v2/storage/files/15')
      .reply(200, { ...fileObject(15, 3), url: 'http://files.elsewhere.test/15' })
      .delete('/v2/storage/files/15')
      .reply(204);
    await assert.rejects(
      transfer().exportTable('in.c-shop.users', {}, sink()),
      userError(/download a file from another origin/),
    );
    assert.ok(!elsewhere.isDone());
  });

  it('reads the file storage provider from tokens/verify', async () => {
    nock(URL)
      .get('/v2/storage/tokens/verify')
      .reply(200, { id: '1', owner: { id: 1, fileStorageProvider: 'gex' } });
    assert.equal(await transfer().fileStorageProvider(), 'gex');
    nock(URL)
      .get('/v2/storage/tokens/verify')
      .reply(200, { id: '1', owner: { id: 1 } });
    assert.equal(await transfer().fileStorageProvider(), '');
  });
});

describe('CSV record count', () => {
  const count = async (chunks: string[], enclosure = '"') => {
    const counter = new CsvRecordCount(enclosure);
    const done = new Promise((resolve) => counter.on('end', resolve));
    counter.resume();
    for (const c of chunks) counter.write(Buffer.from(c));
    counter.end();
    await done;
    return counter.records;
  };

  it('counts records, not lines: quoted line ends, doubled enclosures, CRLF, no final line end, split chunks', async () => {
    assert.equal(await count(['"a","b"\n"1","x\ny"\n']), 2);
    assert.equal(await count(['"a"\r\n"1 ""q"""\r\n"2"']), 3);
    assert.equal(await count(['"a', '"\n"x\n', 'y"\n']), 2);
    assert.equal(await count(['a\n\n\nb\n']), 2, 'empty lines are not records');
    assert.equal(await count(["'a'\n'x\ny'\n"], "'"), 2);
    assert.equal(await count(['']), 0);
  });
});
