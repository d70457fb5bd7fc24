import assert from 'node:assert/strict';
import { once } from 'node:events';
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

for (const factory of storeBackends()) {
  describe(`kill -9 of gex serve during an import job (${factory.name})`, function () {
    this.timeout(180_000);

    it('leaves the table unchanged, and the next server ends the job error', async () => {
      const store = await factory.fresh();
      try {
        let served = await startServe(['--store', store.location, '--workers', '0'], TEST_KEY);
        const created = await runGex(
          ['tokens', 'create', '--description', 'kill', '--store', store.location],
          TEST_KEY,
        );
        assert.equal(created.code, 0, created.stderr);
        const token = created.stdout.trim();
        await call(served.url, token, 'POST', `${S}/buckets`, { name: 'kill', stage: 'in' });
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

        // a file whose load takes a while: rows with a new column, overwriting the seed's keys
        const lines = ['id,v,extra'];
        for (let i = 0; i < 1_500_000; i++) lines.push(`${i},value ${i},extra ${i}`);
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
        const exited = once(served.child, 'exit');
        served.child.kill('SIGKILL');
        await exited;

        served = await startServe(['--store', store.location, '--workers', '0'], TEST_KEY);
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
  });
}
