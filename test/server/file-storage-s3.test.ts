import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileKey } from '../../src/store/files/object-store.js';
import { gexBin, startServe } from '../support/cli.js';
import { track } from '../support/children.js';
import { freshBucket, swiftOrSkip, type Swift, type TestBucket } from '../support/object-store.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { call } from '../support/serve-cluster.js';
import { runGex } from '../support/cli.js';
import { postgresBackend, TEST_KEY } from '../support/store.js';
import { jobResult } from '../support/serve-files.js';

const S = '/v2/storage';

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

function swiftEnv(swift: Swift, overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    AWS_ENDPOINT_URL: swift.endpoint,
    AWS_REGION: swift.region,
    AWS_ACCESS_KEY_ID: swift.accessKeyId,
    AWS_SECRET_ACCESS_KEY: swift.secretAccessKey,
    GEX_LOG_FORMAT: 'text',
    ...overrides,
  };
}

/** Runs `gex serve` expecting it to stop at start; its exit code and everything it wrote. */
function serveFailing(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = track(
    spawn(process.execPath, [gexBin, 'serve', '--port', '0', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

async function put(url: string, token: string, body: string): Promise<number> {
  const response = await fetch(url, { method: 'PUT', headers: { 'X-StorageApi-Token': token }, body });
  await response.text();
  return response.status;
}

describe('gex serve --file-storage s3://… (files in an object store)', function () {
  this.timeout(60_000);
  let swift: Swift;
  let dir: string;
  let store: string;
  let token: string;
  let projectId: number;
  let bucket: TestBucket | undefined;

  before(async function () {
    swift = await swiftOrSkip(this);
    dir = await mkdtemp(path.join(tmpdir(), 'gex-file-storage-'));
    store = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(store);
    try {
      const created = await backend.createToken({ description: 'files' });
      token = created.token;
      projectId = created.info.projectId;
    } finally {
      await backend.close();
    }
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    await bucket?.remove();
    bucket = undefined;
  });

  it('exits 1 at start with one line naming the cause, no secret, when the bucket cannot be used', async () => {
    bucket = await freshBucket(swift);
    const wrongSecret = 'wrong-secret-4f9c2a77';
    const cases: Array<[string, string, NodeJS.ProcessEnv, RegExp]> = [
      ['a wrong secret key', `s3://${bucket.name}`, { AWS_SECRET_ACCESS_KEY: wrongSecret }, /secret key is wrong/],
      ['a missing bucket', 's3://gex-no-such-bucket-9d1e', {}, /there is no bucket gex-no-such-bucket-9d1e/],
      [
        'an unreachable endpoint',
        `s3://${bucket.name}`,
        { AWS_ENDPOINT_URL: 'http://127.0.0.1:1' },
        /cannot be reached while opening the bucket/,
      ],
      ['an invalid location', 's3://Not_A_Bucket', {}, /The bucket of s3:\/\/BUCKET must be/],
    ];
    for (const [what, url, env, cause] of cases) {
      const { code, output } = await serveFailing(['--store', store, '--file-storage', url], swiftEnv(swift, env));
      assert.equal(code, 1, `${what}: ${output}`);
      assert.match(output, cause, what);
      const lines = output.trim().split('\n');
      assert.equal(lines.length, 1, `${what}: one line, got ${output}`);
      assert.doesNotMatch(output, /listening/, what);
      for (const secret of [wrongSecret, swift.secretAccessKey]) assert.equal(output.includes(secret), false, what);
    }
  });

  it('gex worker exits 1 at start the same way, before it runs a job', async function () {
    const pg = postgresBackend();
    if (!pg) return this.skip();
    const fresh = await pg.fresh();
    try {
      const wrongSecret = 'wrong-secret-77a1c9d0';
      bucket = await freshBucket(swift);
      for (const [env, cause] of [
        [{ AWS_SECRET_ACCESS_KEY: wrongSecret }, /secret key is wrong/],
        [{ GEX_FILE_STORAGE: 's3://gex-no-such-bucket-9d1e' }, /there is no bucket gex-no-such-bucket-9d1e/],
      ] as const) {
        const args = ['worker', '--store', fresh.location];
        if (!('GEX_FILE_STORAGE' in env)) args.push('--file-storage', `s3://${bucket.name}`);
        const result = await runGex(args, { ...TEST_KEY, ...swiftEnv(swift, env) });
        const output = result.stdout + result.stderr;
        assert.equal(result.code, 1, output);
        assert.match(output, cause);
        assert.equal(output.trim().split('\n').length, 1, output);
        assert.doesNotMatch(output, /Worker ready/);
        for (const secret of [wrongSecret, swift.secretAccessKey]) assert.equal(output.includes(secret), false);
      }
    } finally {
      await fresh.dispose();
    }
  });

  it('takes the location from $GEX_FILE_STORAGE and refuses an --max-upload-memory one upload does not fit in', async () => {
    const fromEnv = await serveFailing(
      ['--store', store],
      swiftEnv(swift, { GEX_FILE_STORAGE: 's3://gex-no-such-bucket-9d1e' }),
    );
    assert.equal(fromEnv.code, 1, fromEnv.output);
    assert.match(fromEnv.output, /there is no bucket gex-no-such-bucket-9d1e/);
    const memory = await serveFailing(
      ['--store', store, '--file-storage', 's3://gex-files', '--max-upload-memory', String(4 * 1024 * 1024)],
      swiftEnv(swift),
    );
    assert.equal(memory.code, 1, memory.output);
    assert.match(memory.output, /--max-upload-memory must be at least 25165824 bytes with --file-storage/);
  });

  it('keeps uploads in the bucket: download, table import, refused upload, delete and expiry remove the object', async () => {
    bucket = await freshBucket(swift, 'gex/');
    const { child, url, output } = await startServe(
      ['--store', store, '--file-storage', `s3://${bucket.name}/gex`, '--max-file-size', '100000'],
      swiftEnv(swift),
    );
    const exited = exitOf(child);
    const ids: number[] = [];
    try {
      assert.match(output(), new RegExp(`files: s3://${bucket.name}/gex/`));
      const upload = async (content: string, name = 'data.csv'): Promise<number> => {
        const prepared = await call(url, token, 'POST', `${S}/files/prepare`, { name });
        assert.equal(prepared.status, 200, JSON.stringify(prepared.body));
        assert.equal(await put(prepared.body.uploadParams.url, token, content), 200);
        ids.push(prepared.body.id);
        return prepared.body.id;
      };
      const content = 'id,name\n1,Ann\n2,"Bob, Jr."\n3,Cé\n';
      const id = await upload(content);
      const key = fileKey(projectId, id);
      assert.equal(await bucket.store.head(key), Buffer.byteLength(content));
      const detail = await call(url, token, 'GET', `${S}/files/${id}`);
      assert.equal(detail.body.sizeBytes, Buffer.byteLength(content));

      const download = await fetch(`${url}${S}/files/${id}/content`, { headers: { 'X-StorageApi-Token': token } });
      assert.equal(download.status, 200);
      assert.equal(await download.text(), content);

      // a table import reads the object
      assert.equal((await call(url, token, 'POST', `${S}/buckets`, { name: 'shop', stage: 'in' })).status, 201);
      const started = await call(url, token, 'POST', `${S}/buckets/in.c-shop/tables-async`, {
        name: 'users',
        dataFileId: id,
      });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      await jobResult(url, token, started.body.id);
      const preview = await fetch(`${url}${S}/tables/in.c-shop.users/data-preview?format=json`, {
        headers: { 'X-StorageApi-Token': token },
      });
      const rows = ((await preview.json()) as { rows: Array<Array<{ columnName: string; value: string }>> }).rows;
      assert.deepEqual(rows.map((r) => r.map((c) => c.value)).sort(), [
        ['1', 'Ann'],
        ['2', 'Bob, Jr.'],
        ['3', 'Cé'],
      ]);

      // an export is stored as a new file in the bucket
      const exportJob = await call(url, token, 'POST', `${S}/tables/in.c-shop.users/export-async`, {});
      assert.equal(exportJob.status, 202, JSON.stringify(exportJob.body));
      const exported = (await jobResult(url, token, exportJob.body.id)) as { file: { id: number } };
      ids.push(exported.file.id);
      const exportedSize = await bucket.store.head(fileKey(projectId, exported.file.id));
      const exportedText = await (
        await fetch(`${url}${S}/files/${exported.file.id}/content`, { headers: { 'X-StorageApi-Token': token } })
      ).text();
      assert.equal(exportedSize, Buffer.byteLength(exportedText));
      assert.match(exportedText, /"2","Bob, Jr\."/);

      // an upload past --max-file-size (sent chunked: no length to refuse it by) stores nothing and stays prepared
      const big = await call(url, token, 'POST', `${S}/files/prepare`, { name: 'big.csv' });
      const refused = await fetch(big.body.uploadParams.url, {
        method: 'PUT',
        headers: { 'X-StorageApi-Token': token },
        body: new ReadableStream({
          start(controller) {
            for (let i = 0; i < 30; i++) controller.enqueue(new Uint8Array(10_000).fill(65));
            controller.close();
          },
        }),
        duplex: 'half',
      });
      assert.equal(refused.status, 413, await refused.text());
      assert.equal(await bucket.store.head(fileKey(projectId, big.body.id)), undefined);
      assert.equal((await call(url, token, 'GET', `${S}/files/${big.body.id}`)).body.sizeBytes, null);

      // delete removes the row and the object
      assert.equal((await call(url, token, 'DELETE', `${S}/files/${id}`)).status, 204);
      assert.equal(await bucket.store.head(key), undefined);
      assert.equal((await call(url, token, 'GET', `${S}/files/${id}`)).status, 404);

      // an expired file goes with its object when the server next purges (a list of files)
      const old = await upload('a\n1\n', 'old.csv');
      assert.equal(await bucket.store.head(fileKey(projectId, old)), 4);
      const direct = await openEmbeddedStore(store);
      try {
        await direct.db.run('UPDATE storage_files SET expires = ? WHERE id = ?', ['2000-01-01T00:00:00.000Z', old]);
        assert.equal((await call(url, token, 'GET', `${S}/files`)).status, 200);
        assert.equal(await bucket.store.head(fileKey(projectId, old)), undefined);
        // no file of the bucket ever had a chunk row
        const chunks = await direct.db.get<{ n: unknown }>(
          `SELECT COUNT(*) AS n FROM storage_file_chunks WHERE file_id IN (${ids.map(() => '?').join(',')})`,
          ids,
        );
        assert.equal(Number(chunks?.n), 0);
      } finally {
        await direct.close();
      }
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, output());
  });
});
