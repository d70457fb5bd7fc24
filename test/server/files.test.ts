import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CHUNK_BYTES } from '../../src/store/files/project-files.js';
import { ProjectTables } from '../../src/store/tables/index.js';
import {
  describeEachBackend,
  useTestServer,
  type ApiResponse,
  type Json,
  type TestServer,
} from '../support/storage-api-server.js';

const S = '/v2/storage';
const LIMIT = 64 * 1024;

const csv = (rows: string[][]) =>
  rows.map((r) => r.map((v) => `"${v.replaceAll('"', '""')}"`).join(',') + '\n').join('');

/** PUTs `bytes` to a file's upload address. */
async function put(
  server: TestServer,
  url: string,
  bytes: Buffer | string,
  token = server.token,
): Promise<ApiResponse> {
  const response = await fetch(url, {
    method: 'PUT',
    headers: { 'X-StorageApi-Token': token, 'content-type': 'text/csv' },
    body: typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes,
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    text,
    body: text ? JSON.parse(text) : undefined,
  };
}

/** The token of the test's project (set before each test). */
let projectToken = '';

/** Prepares and uploads a file; returns its id. */
async function upload(server: TestServer, content: string, name = 'data.csv', token = projectToken): Promise<number> {
  const prepared = await server.post(`${S}/files/prepare`, { token, json: { name } });
  assert.equal(prepared.status, 200, prepared.text);
  const done = await put(server, prepared.body.uploadParams.url, content, token);
  assert.equal(done.status, 200, done.text);
  return prepared.body.id;
}

/** Polls a job until it has finished. */
async function finished(server: TestServer, job: Json, token = server.token): Promise<Json> {
  for (;;) {
    const res = await server.get(`${S}/jobs/${job.id}`, { token });
    assert.equal(res.status, 200, res.text);
    if (res.body.status === 'success' || res.body.status === 'error') return res.body;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function submit(server: TestServer, url: string, fields: Json, token = server.token): Promise<Json> {
  const res = await server.post(url, { token, json: fields });
  assert.equal(res.status, 202, res.text);
  assert.equal(res.body.status, 'waiting');
  return finished(server, res.body, token);
}

async function rows(server: TestServer, tableId: string, token = server.token): Promise<string> {
  const res = await server.get(`${S}/tables/${tableId}/data-preview`, { token });
  assert.equal(res.status, 200, res.text);
  return res.text;
}

/** Sends raw HTTP and returns what the server answered (and whether it closed the connection). */
function rawRequest(
  server: TestServer,
  head: string,
  body: (socket: net.Socket) => void,
): Promise<{ answer: string; closed: boolean }> {
  const { hostname, port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(head);
      body(socket);
    });
    let answer = '';
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve({ answer, closed: true }));
  });
}

describeEachBackend('server: File Storage and table imports/exports', (backend) => {
  const server = useTestServer({ backend, fileLimit: LIMIT });
  let project = 0;
  let token: string;

  beforeEach(async () => {
    token = await server().createToken({ project: `files-${++project}` });
    projectToken = token;
  });

  it("prepares, uploads, lists, reads and deletes a file in Keboola's shape", async () => {
    const prepared = await server().post(`${S}/files/prepare`, {
      token,
      form: { name: 'orders.csv', 'tags[]': 'a', isPermanent: '1' },
    });
    assert.equal(prepared.status, 200, prepared.text);
    const id = prepared.body.id;
    assert.equal(typeof id, 'number');
    assert.deepEqual(prepared.body.uploadParams, { url: `${server().baseUrl}${S}/files/${id}/content`, method: 'PUT' });
    assert.equal(prepared.body.sizeBytes, null);
    assert.equal(prepared.body.provider, 'gex');
    assert.equal(prepared.body.maxAgeDays, null);
    const done = await put(server(), prepared.body.uploadParams.url, 'id\n1\n', token);
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(Object.keys(done.body), [
      'id',
      'created',
      'isPublic',
      'isSliced',
      'isEncrypted',
      'name',
      'url',
      'provider',
      'region',
      'sizeBytes',
      'tags',
      'maxAgeDays',
      'runId',
      'runIds',
      'creatorToken',
    ]);
    assert.equal(done.body.sizeBytes, 5);
    assert.deepEqual(done.body.tags, ['a']);
    const other = await server().post(`${S}/files/prepare`, { token, json: { name: 'second.csv' } });
    assert.equal(other.body.maxAgeDays, 15);
    const list = await server().get(`${S}/files`, { token });
    assert.deepEqual(
      list.body.map((f: Json) => f.name),
      ['second.csv', 'orders.csv'],
    );
    const tagged = await server().get(`${S}/files?tags[]=a`, { token });
    assert.deepEqual(
      tagged.body.map((f: Json) => f.id),
      [id],
    );
    const content = await fetch(done.body.url, { headers: { 'X-StorageApi-Token': token } });
    assert.equal(content.status, 200);
    assert.equal(content.headers.get('content-type'), 'application/octet-stream');
    assert.equal(await content.text(), 'id\n1\n');
    const branchForm = await server().get(`${S}/branch/default/files/${id}`, { token });
    assert.equal(branchForm.body.sizeBytes, 5);
    const noToken = await fetch(done.body.url);
    assert.equal(noToken.status, 401);
    assert.equal((await server().delete(`${S}/files/${id}`, { token })).status, 204);
    const gone = await server().get(`${S}/files/${id}`, { token });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.code, 'storage.files.notFound');
    assert.match(gone.body.error, new RegExp(`File "?${id}"? not found`));
  });

  it('refuses a whole body over the limit (413) and keeps the file not uploaded', async () => {
    const big = Buffer.alloc(LIMIT + 1, 7);
    const prepared = await server().post(`${S}/files/prepare`, { token, json: { name: 'big.bin' } });
    // larger than the limit of this server: refused; the limit is the server's option
    const refused = await put(server(), prepared.body.uploadParams.url, big, token);
    assert.equal(refused.status, 413, refused.text);
    assert.equal(refused.body.code, 'storage.files.tooLarge');
    const after = await server().get(`${S}/files/${prepared.body.id}`, { token });
    assert.equal(after.body.sizeBytes, null, 'a refused upload leaves the file not uploaded');
  });

  it('takes the name as metadata only: ../ and odd names never become paths', async () => {
    const marker = `gex-evil-${process.pid}-${Date.now()}`;
    const names = [
      `../../../../../../tmp/${marker}`,
      `..\\..\\${marker}`,
      `/tmp/${marker}`,
      `a/../../${marker}\u202e.csv`,
    ];
    for (const name of names) {
      const id = await upload(server(), 'id\n1\n', name, token);
      const detail = await server().get(`${S}/files/${id}`, { token });
      assert.equal(detail.body.name, name);
      await server().post(`${S}/buckets`, { token, json: { name: 'evil', stage: 'in' } });
      const job = await submit(
        server(),
        `${S}/buckets/in.c-evil/tables-async`,
        { name: `t${id}`, dataFileId: id },
        token,
      );
      assert.equal(job.status, 'success', JSON.stringify(job));
    }
    for (const dir of ['/tmp', os.tmpdir(), process.cwd(), path.resolve('..')])
      assert.equal(existsSync(path.join(dir, marker)), false, `${dir}/${marker} must not exist`);
  });

  it("refuses another project's file and job (404), everywhere", async () => {
    const id = await upload(server(), 'id\n1\n', 'mine.csv', token);
    const stranger = await server().createToken({ project: `stranger-${project}` });
    for (const [method, url] of [
      ['GET', `${S}/files/${id}`],
      ['GET', `${S}/files/${id}/content`],
      ['DELETE', `${S}/files/${id}`],
    ] as const) {
      const res = await server().request(method, url, { token: stranger });
      assert.equal(res.status, 404, `${method} ${url}: ${res.text}`);
      assert.match(res.body.error, new RegExp(String(id)));
    }
    const putRes = await put(server(), `${server().baseUrl}${S}/files/${id}/content`, 'x', stranger);
    assert.equal(putRes.status, 404);
    assert.deepEqual((await server().get(`${S}/files`, { token: stranger })).body, []);
    await server().post(`${S}/buckets`, { token: stranger, json: { name: 'b', stage: 'in' } });
    const imp = await server().post(`${S}/buckets/in.c-b/tables-async`, {
      token: stranger,
      json: { name: 't', dataFileId: id },
    });
    assert.equal(imp.status, 404, imp.text);
    assert.match(imp.body.error, new RegExp(`File "?${id}"? not found`));
    // a job of this project is not the stranger's
    await server().post(`${S}/buckets`, { token, json: { name: 'b', stage: 'in' } });
    const res = await server().post(`${S}/buckets/in.c-b/tables-async`, { token, json: { name: 't', dataFileId: id } });
    await finished(server(), res.body, token);
    const job = await server().get(`${S}/jobs/${res.body.id}`, { token: stranger });
    assert.equal(job.status, 404);
    // the stranger has no table
    assert.equal((await server().get(`${S}/tables/in.c-b.t`, { token: stranger })).status, 404);
  });

  it('uploads a file once; a second PUT is refused', async () => {
    const prepared = await server().post(`${S}/files/prepare`, { token, json: { name: 'once.csv' } });
    assert.equal((await put(server(), prepared.body.uploadParams.url, 'a\n', token)).status, 200);
    const again = await put(server(), prepared.body.uploadParams.url, 'b\n', token);
    assert.equal(again.status, 400, again.text);
    assert.match(again.body.error, /already been uploaded/);
    const content = await fetch(prepared.body.url, { headers: { 'X-StorageApi-Token': token } });
    assert.equal(await content.text(), 'a\n');
  });

  it('refuses an upload over the limit before reading it (413, the body never sent)', async () => {
    const prepared = await server().post(`${S}/files/prepare`, { token, json: { name: 'huge.csv' } });
    const url = new URL(prepared.body.uploadParams.url);
    // announce a terabyte, send nothing: the answer comes anyway, and the connection closes
    const { answer, closed } = await rawRequest(
      server(),
      `PUT ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nX-StorageApi-Token: ${token}\r\nContent-Length: 1000000000000\r\n\r\n`,
      () => undefined,
    );
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /storage\.files\.tooLarge/);
    assert.match(answer, /GEX_FILE_TOO_LARGE/);
    assert.ok(closed);
  });

  it('refuses a chunked upload once it exceeds the limit, and keeps the file not uploaded', async () => {
    const prepared = await server().post(`${S}/files/prepare`, { token, json: { name: 'chunked.csv' } });
    const url = new URL(prepared.body.uploadParams.url);
    const piece = 'x'.repeat(16 * 1024);
    const { answer } = await rawRequest(
      server(),
      `PUT ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nX-StorageApi-Token: ${token}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      (socket) => {
        for (let i = 0; i < 8; i++) socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
        socket.write('0\r\n\r\n');
      },
    );
    assert.match(answer, /^HTTP\/1\.1 413 /);
    const detail = await server().get(`${S}/files/${prepared.body.id}`, { token });
    assert.equal(detail.body.sizeBytes, null);
  });

  it('leaves a truncated upload not uploaded, and an import of it is refused', async () => {
    const prepared = await server().post(`${S}/files/prepare`, { token, json: { name: 'cut.csv' } });
    const url = new URL(prepared.body.uploadParams.url);
    await rawRequest(
      server(),
      `PUT ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nX-StorageApi-Token: ${token}\r\nContent-Length: 1000\r\n\r\n`,
      (socket) => {
        socket.write('id\n1\n2\n');
        setTimeout(() => socket.destroy(), 50);
      },
    );
    await server().post(`${S}/buckets`, { token, json: { name: 'b', stage: 'in' } });
    // the server notices the broken body; until then the file is being uploaded, never readable
    for (;;) {
      const detail = await server().get(`${S}/files/${prepared.body.id}`, { token });
      assert.equal(detail.body.sizeBytes, null);
      const imp = await server().post(`${S}/buckets/in.c-b/tables-async`, {
        token,
        json: { name: 't', dataFileId: prepared.body.id },
      });
      assert.equal(imp.status, 400, imp.text);
      assert.match(imp.body.error, new RegExp(`File ${prepared.body.id} \\("?cut.csv"?\\) has not been uploaded`));
      const content = await server().get(`${S}/files/${prepared.body.id}/content`, { token });
      assert.equal(content.status, 400);
      // back to prepared: a new upload is accepted
      const retry = await put(server(), prepared.body.uploadParams.url, 'id\n1\n', token);
      if (retry.status === 200) break;
      assert.match(retry.body.error, /upload in progress/);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal((await server().get(`${S}/tables/in.c-b.t`, { token })).status, 404);
  });

  it('creates a table from a file, imports full and incremental with a key and delete_where', async () => {
    await server().post(`${S}/buckets`, { token, json: { name: 'shop', stage: 'in' } });
    const first = await upload(
      server(),
      csv([
        ['id', 'name', 'city'],
        ['1', 'Ann', 'Brno'],
        ['2', 'Bob', 'Praha'],
      ]),
    );
    const created = await submit(
      server(),
      `${S}/buckets/in.c-shop/tables-async`,
      { name: 'users', dataFileId: first, primaryKey: 'id' },
      token,
    );
    assert.equal(created.status, 'success', JSON.stringify(created));
    assert.equal(created.operationName, 'tableCreate');
    assert.equal(created.results.id, 'in.c-shop.users');
    assert.ok(created.startTime && created.endTime);
    assert.equal(created.error, null);
    const detail = await server().get(`${S}/tables/in.c-shop.users`, { token });
    assert.deepEqual(detail.body.primaryKey, ['id']);

    const upsert = await upload(
      server(),
      csv([
        ['id', 'name', 'city', 'age'],
        ['2', 'Bobby', 'Praha', '30'],
        ['3', 'Cid', 'Brno', '40'],
      ]),
    );
    const imported = await submit(
      server(),
      `${S}/tables/in.c-shop.users/import-async`,
      { dataFileId: upsert, incremental: 1, primaryKey: ['id'] },
      token,
    );
    assert.equal(imported.status, 'success', JSON.stringify(imported));
    assert.equal(imported.operationName, 'tableImport');
    assert.deepEqual(imported.results.importedColumns, ['id', 'name', 'city', 'age']);
    assert.deepEqual(imported.results.newColumns, ['age']);
    assert.equal(imported.results.totalRowsCount, 3);
    assert.equal(
      await rows(server(), 'in.c-shop.users', token),
      csv([
        ['id', 'name', 'city', 'age'],
        ['1', 'Ann', 'Brno', ''],
        ['2', 'Bobby', 'Praha', '30'],
        ['3', 'Cid', 'Brno', '40'],
      ]),
    );

    const deletes = await upload(
      server(),
      csv([
        ['id', 'name', 'city', 'age'],
        ['4', 'Dan', 'Brno', '50'],
      ]),
    );
    const deleted = await submit(
      server(),
      `${S}/tables/in.c-shop.users/import-async`,
      { dataFileId: deletes, incremental: 'true', deleteWhereColumn: 'city', deleteWhereValues: ['Brno'] },
      token,
    );
    assert.equal(deleted.status, 'success', JSON.stringify(deleted));
    assert.equal(
      await rows(server(), 'in.c-shop.users', token),
      csv([
        ['id', 'name', 'city', 'age'],
        ['2', 'Bobby', 'Praha', '30'],
        ['4', 'Dan', 'Brno', '50'],
      ]),
    );

    const full = await upload(server(), 'id,name,city,age\n9,Zed,Ostrava,1\n');
    const replaced = await submit(server(), `${S}/tables/in.c-shop.users/import-async`, { dataFileId: full }, token);
    assert.equal(replaced.status, 'success', JSON.stringify(replaced));
    assert.equal(replaced.results.totalRowsCount, 1);

    const headless = await upload(server(), '10,Yan,Zlin,2\n');
    const noHeader = await submit(
      server(),
      `${S}/tables/in.c-shop.users/import-async`,
      { dataFileId: headless, incremental: 1, withoutHeaders: 1, columns: ['id', 'name', 'city', 'age'] },
      token,
    );
    assert.equal(noHeader.status, 'success', JSON.stringify(noHeader));
    assert.equal(noHeader.results.totalRowsCount, 2);
  });

  it('ends a job error naming the table, file or key, and leaves the table unchanged', async () => {
    await server().post(`${S}/buckets`, { token, json: { name: 'b', stage: 'in' } });
    const first = await upload(server(), 'id,name\n1,Ann\n');
    await submit(
      server(),
      `${S}/buckets/in.c-b/tables-async`,
      { name: 't', dataFileId: first, primaryKey: 'id' },
      token,
    );
    const before = await rows(server(), 'in.c-b.t', token);

    const mismatch = await upload(server(), 'id,nick\n2,Bo\n', 'nick.csv');
    const header = await submit(
      server(),
      `${S}/tables/in.c-b.t/import-async`,
      { dataFileId: mismatch, incremental: 1, columns: ['id', 'name'] },
      token,
    );
    assert.equal(header.status, 'error');
    assert.match(
      header.error.message,
      new RegExp(`File ${mismatch} \\("?nick.csv"?\\) has the header "?id"?, "?nick"?`),
    );
    assert.match(header.error.message, /in\.c-b\.t/);

    const otherKey = await upload(server(), 'id,name\n2,Bo\n');
    const key = await submit(
      server(),
      `${S}/tables/in.c-b.t/import-async`,
      { dataFileId: otherKey, incremental: 1, primaryKey: 'name' },
      token,
    );
    assert.equal(key.status, 'error');
    assert.match(
      key.error.message,
      /^The table "?in\.c-b\.t"? has primary key "?id"?; the import asks for key "?name"?\.$/,
    );

    // a table without a key takes the import's key (as a load into the embedded store does), then upserts by it
    const plain = await upload(server(), 'id,name\n1,Al\n');
    await submit(server(), `${S}/buckets/in.c-b/tables-async`, { name: 'nokey', dataFileId: plain }, token);
    const keyed = await upload(server(), 'id,name\n1,Ann\n2,Bo\n');
    const setKey = await submit(
      server(),
      `${S}/tables/in.c-b.nokey/import-async`,
      { dataFileId: keyed, incremental: 1, primaryKey: 'id' },
      token,
    );
    assert.equal(setKey.status, 'success', JSON.stringify(setKey.error));
    assert.deepEqual((await server().get(`${S}/tables/in.c-b.nokey`, { token })).body.primaryKey, ['id']);
    assert.equal(await rows(server(), 'in.c-b.nokey', token), '"id","name"\n"1","Ann"\n"2","Bo"\n');

    const missing = await upload(server(), 'a,b\n1,2\n');
    const badKey = await submit(
      server(),
      `${S}/buckets/in.c-b/tables-async`,
      { name: 'u', dataFileId: missing, primaryKey: 'nope' },
      token,
    );
    assert.equal(badKey.status, 'error');
    assert.match(badKey.error.message, /primary key column "?nope"? is not a column of the table/);
    assert.equal((await server().get(`${S}/tables/in.c-b.u`, { token })).status, 404);

    const exists = await submit(server(), `${S}/buckets/in.c-b/tables-async`, { name: 't', dataFileId: first }, token);
    assert.equal(exists.status, 'error');
    assert.match(exists.error.message, /Table "?in\.c-b\.t"? already exists/);

    assert.equal(await rows(server(), 'in.c-b.t', token), before);
  });

  it("refuses a read-only token's writes (403) and bad table ids (404) before any job", async () => {
    const id = await upload(server(), 'id\n1\n');
    await server().post(`${S}/buckets`, { token, json: { name: 'b', stage: 'in' } });
    await submit(server(), `${S}/buckets/in.c-b/tables-async`, { name: 't', dataFileId: id }, token);
    const info = await server().backend.authenticate(token);
    const readOnly = await server().createToken({ project: info!.projectName, readOnly: true });
    for (const [url, fields] of [
      [`${S}/files/prepare`, { name: 'x.csv' }],
      [`${S}/buckets/in.c-b/tables-async`, { name: 'u', dataFileId: id }],
      [`${S}/tables/in.c-b.t/import-async`, { dataFileId: id }],
    ] as const) {
      const res = await server().post(url, { token: readOnly, json: fields });
      assert.equal(res.status, 403, `${url}: ${res.text}`);
    }
    assert.equal((await put(server(), `${server().baseUrl}${S}/files/${id}/content`, 'x', readOnly)).status, 403);
    assert.equal((await server().delete(`${S}/files/${id}`, { token: readOnly })).status, 403);
    const noTable = await server().post(`${S}/tables/in.c-b.nope/import-async`, { token, json: { dataFileId: id } });
    assert.equal(noTable.status, 404);
    const badId = await server().post(`${S}/tables/..%2F..%2Fx/import-async`, { token, json: { dataFileId: id } });
    assert.equal(badId.status, 404);
    const noFile = await server().post(`${S}/tables/in.c-b.t/import-async`, { token, json: { dataFileId: '12345' } });
    assert.equal(noFile.status, 404);
    assert.match(noFile.body.error, /File "?12345"? not found/);
  });

  it("exports a table to a file (plain and gzip) in Keboola's CSV", async () => {
    await server().post(`${S}/buckets`, { token, json: { name: 'b', stage: 'out' } });
    const id = await upload(server(), 'id,name\n1,"A ""quoted"" one"\n2,\n');
    await submit(server(), `${S}/buckets/out.c-b/tables-async`, { name: 't', dataFileId: id }, token);
    const exported = await submit(server(), `${S}/tables/out.c-b.t/export-async`, { columns: ['name', 'id'] }, token);
    assert.equal(exported.status, 'success', JSON.stringify(exported));
    assert.equal(exported.operationName, 'tableExport');
    const file = await server().get(`${S}/files/${exported.results.file.id}`, { token });
    assert.equal(file.body.name, 'out.c-b.t.csv');
    const content = await fetch(file.body.url, { headers: { 'X-StorageApi-Token': token } });
    assert.equal(await content.text(), '"name","id"\n"A ""quoted"" one","1"\n"","2"\n');

    const zipped = await submit(
      server(),
      `${S}/tables/out.c-b.t/export-async`,
      { gzip: 1, whereColumn: 'id', whereValues: ['2'] },
      token,
    );
    const zfile = await server().get(`${S}/files/${zipped.results.file.id}`, { token });
    const zcontent = await fetch(zfile.body.url, { headers: { 'X-StorageApi-Token': token } });
    assert.equal(gunzipSync(Buffer.from(await zcontent.arrayBuffer())).toString(), '"id","name"\n"2",""\n');
    // a read-only token may export (it reads)
    const info = await server().backend.authenticate(token);
    const readOnly = await server().createToken({ project: info!.projectName, readOnly: true });
    const ro = await submit(server(), `${S}/tables/out.c-b.t/export-async`, {}, readOnly);
    assert.equal(ro.status, 'success');
    const tables = new ProjectTables(server().backend.db, info!.projectId);
    assert.equal((await tables.table('out.c-b.t')).rowsCount, 2);
  });

  it('names gex as the file storage provider in the token detail', async () => {
    const res = await server().get(`${S}/tokens/verify`, { token });
    assert.equal(res.body.owner.fileStorageProvider, 'gex');
  });
});

describeEachBackend('server: imports of files of several stored chunks', (backend) => {
  const big = useTestServer({ backend, fileLimit: 4 * CHUNK_BYTES });
  let token: string;

  beforeEach(async () => {
    token = await big().createToken({ project: 'files-big' });
    projectToken = token;
  });

  it('imports a file of several stored chunks, and names the line of a NUL found in a later chunk', async () => {
    await big().post(`${S}/buckets`, { token, json: { name: 'b', stage: 'in' } });
    // ~1.6 MB: two stored chunks, read one after the other by the import (PostgreSQL: straight into the load)
    const lines = Array.from({ length: 50_000 }, (_, i) => `${i},value number ${i} of the file\n`);
    const whole = await upload(big(), `id,v\n${lines.join('')}`, 'big.csv');
    const created = await submit(big(), `${S}/buckets/in.c-b/tables-async`, { name: 't', dataFileId: whole }, token);
    assert.equal(created.status, 'success', JSON.stringify(created.error));
    assert.equal(created.results.totalRowsCount, 50_000);

    lines[45_000] = '45000,a \0 in the second chunk\n';
    const withNul = await upload(big(), `id,v\n${lines.join('')}`, 'nul.csv');
    const refused = await submit(
      big(),
      `${S}/tables/in.c-b.t/import-async`,
      { dataFileId: withNul, incremental: 1 },
      token,
    );
    assert.equal(refused.status, 'error');
    // row 45000 is line 45002: the header is line 1
    assert.match(refused.error.message, /line 45002: a value contains a NUL character/);
    const table = await big().get(`${S}/tables/in.c-b.t`, { token });
    assert.equal(table.body.rowsCount, 50_000, 'the failed import changed nothing');
  });
});
