import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { ORPHANED_JOB_MESSAGE } from '../../src/store/tables/index.js';
import { runGex, startServe } from '../support/cli.js';
import { call } from '../support/serve-cluster.js';
import { storeBackends, TEST_KEY } from '../support/store.js';

const S = '/v2/storage';

async function uploadFile(url: string, token: string, content: Buffer | string): Promise<number> {
  const prepared = await call(url, token, 'POST', `${S}/files/prepare`, { name: 'rows.csv' });
  assert.equal(prepared.status, 200, JSON.stringify(prepared.body));
  const done = await fetch((prepared.body as { uploadParams: { url: string } }).uploadParams.url, {
    method: 'PUT',
    headers: { 'X-StorageApi-Token': token },
    body: typeof content === 'string' ? new TextEncoder().encode(content) : content,
  });
  assert.equal(done.status, 200, await done.text());
  return (prepared.body as { id: number }).id;
}

async function job(
  url: string,
  token: string,
  id: number,
): Promise<{ status: string; error: { message: string } | null }> {
  const res = await call(url, token, 'GET', `${S}/jobs/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { status: string; error: { message: string } | null };
}

async function tableState(url: string, token: string): Promise<unknown> {
  const detail = await call(url, token, 'GET', `${S}/tables/in.c-kill.t`);
  const preview = await fetch(`${url}${S}/tables/in.c-kill.t/data-preview`, {
    headers: { 'X-StorageApi-Token': token },
  });
  const d = detail.body as { rowsCount: number; columns: string[]; primaryKey: string[] };
  return { rows: d.rowsCount, columns: d.columns, key: d.primaryKey, preview: await preview.text() };
}

/** gex serve on `location`, a token made with `gex tokens create`, and the bucket in.c-kill. */
async function serveWithBucket(location: string) {
  const served = await startServe(['--store', location, '--workers', '0'], TEST_KEY);
  const created = await runGex(['tokens', 'create', '--description', 'kill', '--store', location], TEST_KEY);
  assert.equal(created.code, 0, created.stderr);
  const token = created.stdout.trim();
  await call(served.url, token, 'POST', `${S}/buckets`, { name: 'kill', stage: 'in' });
  return { served, token };
}

for (const factory of storeBackends()) {
  describe(`kill -9 of gex serve during an import job (${factory.name})`, function () {
    this.timeout(180_000);

    it('leaves the table unchanged; another server ends the job error (PostgreSQL: one already running, within seconds)', async () => {
      const store = await factory.fresh();
      try {
        const first = await serveWithBucket(store.location);
        const { token } = first;
        let { served } = first;
        const seed = await uploadFile(served.url, token, 'id,v\n1,a\n2,b\n');
        const create = await call(served.url, token, 'POST', `${S}/buckets/in.c-kill/tables-async`, {
          name: 't',
          dataFileId: seed,
          primaryKey: 'id',
        });
        assert.equal(create.status, 202);
        while (
          ['waiting', 'processing'].includes((await job(served.url, token, (create.body as { id: number }).id)).status)
        );
        const before = await tableState(served.url, token);

        // a file whose load takes a while (~2 s on PostgreSQL, read straight from its chunks): rows with a new column, overwriting the seed's keys
        const lines = ['id,v,extra'];
        for (let i = 0; i < 3_000_000; i++) lines.push(`${i},value ${i},extra ${i}`);
        const big = await uploadFile(served.url, token, `${lines.join('\n')}\n`);
        const started = await call(served.url, token, 'POST', `${S}/tables/in.c-kill.t/import-async`, {
          dataFileId: big,
          incremental: 1,
        });
        assert.equal(started.status, 202);
        const id = (started.body as { id: number }).id;
        let status = 'waiting';
        while (status === 'waiting') status = (await job(served.url, token, id)).status;
        assert.equal(status, 'processing', 'the import was caught while it ran');
        // the server answers other requests while the job loads (on SQLite: on a connection of its own);
        // not the table's detail: on PostgreSQL the import's new column locks that table until it commits
        const listed = await call(served.url, token, 'GET', `${S}/files/${big}`);
        assert.equal(listed.status, 200);
        assert.equal((await job(served.url, token, id)).status, 'processing', 'answered while the job ran');
        // PostgreSQL: another server that keeps running ends the job by itself (the dead server's
        // liveness lock went with its session), wherever that server ran; SQLite: the next start does
        const other =
          factory.name === 'PostgreSQL'
            ? await startServe(['--store', store.location, '--workers', '0'], TEST_KEY)
            : undefined;
        const exited = once(served.child, 'exit');
        served.child.kill('SIGKILL');
        await exited;

        if (other) {
          const deadline = Date.now() + 30_000;
          while ((await job(other.url, token, id)).status === 'processing' && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 200));
        }
        served = other ?? (await startServe(['--store', store.location, '--workers', '0'], TEST_KEY));
        try {
          const ended = await job(served.url, token, id);
          assert.equal(ended.status, 'error');
          assert.equal(ended.error?.message, ORPHANED_JOB_MESSAGE);
          assert.deepEqual(await tableState(served.url, token), before);
        } finally {
          served.child.kill('SIGTERM');
          await once(served.child, 'exit');
        }
      } finally {
        await store.dispose();
      }
    });

    it('leaves a file whose upload a kill -9 cut not uploaded: not readable, not importable', async () => {
      const store = await factory.fresh();
      try {
        const first = await serveWithBucket(store.location);
        const { token } = first;
        let { served } = first;
        const prepared = await call(served.url, token, 'POST', `${S}/files/prepare`, { name: 'cut.csv' });
        const id = (prepared.body as { id: number }).id;
        const target = new URL((prepared.body as { uploadParams: { url: string } }).uploadParams.url);
        // 3 MiB of a 10 MiB body: several chunks are stored when the server dies
        const socket = net.connect(Number(target.port), target.hostname);
        await once(socket, 'connect');
        socket.on('error', () => undefined);
        socket.write(
          `PUT ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nX-StorageApi-Token: ${token}\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`,
        );
        const line = 'id,v\n' + 'x'.repeat(1023) + '\n';
        for (let i = 0; i < 3 * 1024; i++) if (!socket.write(line)) await once(socket, 'drain');
        // the upload has begun (the file is claimed) and its first chunks are on their way to the database
        for (;;) {
          const detail = await call(served.url, token, 'GET', `${S}/files/${id}`);
          assert.equal(detail.body.sizeBytes, null);
          const again = await fetch(target, { method: 'PUT', headers: { 'X-StorageApi-Token': token }, body: 'x' });
          if (/upload in progress/.test(await again.text())) break;
        }
        const exited = once(served.child, 'exit');
        served.child.kill('SIGKILL');
        await exited;
        socket.destroy();

        served = await startServe(['--store', store.location, '--workers', '0'], TEST_KEY);
        try {
          const detail = await call(served.url, token, 'GET', `${S}/files/${id}`);
          assert.equal(detail.body.sizeBytes, null);
          const content = await call(served.url, token, 'GET', `${S}/files/${id}/content`);
          assert.equal(content.status, 400);
          const imported = await call(served.url, token, 'POST', `${S}/buckets/in.c-kill/tables-async`, {
            name: 't',
            dataFileId: id,
          });
          assert.equal(imported.status, 400);
          assert.match(imported.body.error, /has not been uploaded/);
        } finally {
          served.child.kill('SIGTERM');
          await once(served.child, 'exit');
        }
      } finally {
        await store.dispose();
      }
    });
  });
}
