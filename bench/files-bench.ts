import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { localToken } from '../src/store/embedded/tokens.js';
import { runGex, startServe } from '../test/support/cli.js';
import { openEmbeddedStore } from '../test/support/open-store.js';
import { call } from '../test/support/serve-cluster.js';
import { peakRssMb, runJob, uploadFromDisk } from '../test/support/serve-files.js';
import { TEST_KEY, type BackendFactory } from '../test/support/store.js';
import { writeBenchCsv } from './table-load-bench.js';

const CHILD = fileURLToPath(new URL('./table-load-child.js', import.meta.url));
const run = promisify(execFile);

export interface FilesLoadComparison {
  store: BackendFactory['name'];
  rows: number;
  fileMb: number;
  /** prepare + upload + tables-async + polls until success, through a real gex serve */
  serve: { ms: number; peakRssMb: number; uploadMs: number };
  /** the same file into the embedded store directly (ProjectTables.load, a process of its own) */
  embedded: { ms: number; peakRssMb: number };
  /** serve time / embedded time (target ≤ 1.5) */
  ratio: number;
}

/** The embedded load of `file`, in a process of its own (time and peak RSS of the load alone). */
export async function embeddedLoad(backend: BackendFactory, file: string): Promise<{ ms: number; peakRssMb: number }> {
  const fresh = await backend.fresh();
  try {
    const opened = await openEmbeddedStore(fresh.location, TEST_KEY);
    const projectId = (await localToken(opened.db, 'default')).projectId;
    await opened.close();
    const manifest = JSON.stringify({ destination: 'in.c-bench.rows' });
    const { stdout } = await run(process.execPath, [CHILD, 'gex', fresh.location, String(projectId), file, manifest]);
    const m = JSON.parse(stdout) as { ms: number; peakRssMb: number };
    return { ms: m.ms, peakRssMb: m.peakRssMb };
  } finally {
    await fresh.dispose();
  }
}

/** The load of `file` through a real gex serve on a fresh store: upload, create-from-file job, polls. */
async function serveLoad(backend: BackendFactory, file: string): Promise<FilesLoadComparison['serve']> {
  const fresh = await backend.fresh();
  const served = await startServe(['--store', fresh.location, '--workers', '0', '--metrics', 'false'], TEST_KEY);
  try {
    const created = await runGex(['tokens', 'create', '--description', 'bench', '--store', fresh.location], TEST_KEY);
    const token = created.stdout.trim();
    await call(served.url, token, 'POST', '/v2/storage/buckets', { name: 'bench', stage: 'in' });
    const started = performance.now();
    const fileId = await uploadFromDisk(served.url, token, file);
    const uploaded = performance.now();
    await runJob(served.url, token, '/v2/storage/buckets/in.c-bench/tables-async', {
      name: 'rows',
      dataFileId: fileId,
    });
    const ms = Math.round(performance.now() - started);
    return { ms, uploadMs: Math.round(uploaded - started), peakRssMb: await peakRssMb(served.child.pid!) };
  } finally {
    served.child.kill('SIGTERM');
    await once(served.child, 'exit');
    await fresh.dispose();
  }
}

/** `rows` rows × 10 columns loaded through gex serve and into the embedded store, in the same run. */
export async function filesLoadComparison(backend: BackendFactory, rows: number): Promise<FilesLoadComparison> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-files-bench-'));
  try {
    const file = path.join(dir, 'rows.csv');
    await writeBenchCsv(file, rows, 0, 'bench');
    const fileMb = Math.round((await stat(file)).size / 1048576);
    const embedded = await embeddedLoad(backend, file);
    const serve = await serveLoad(backend, file);
    return {
      store: backend.name,
      rows,
      fileMb,
      serve,
      embedded,
      ratio: Math.round((serve.ms / embedded.ms) * 100) / 100,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function describeFilesComparison(r: FilesLoadComparison): string {
  const verdict = r.ratio <= 1.5 ? 'target met' : 'TARGET MISSED';
  return (
    `${r.store.padEnd(10)} ${r.rows} rows (${r.fileMb} MB): gex serve ${r.serve.ms} ms (upload ${r.serve.uploadMs} ms), ` +
    `peak RSS ${r.serve.peakRssMb} MB | embedded ${r.embedded.ms} ms, peak RSS ${r.embedded.peakRssMb} MB | ` +
    `ratio ${r.ratio.toFixed(2)} (${verdict}: <= 1.5)`
  );
}
