/**
 * File Storage in an object store (issue 38), through a real `gex serve` on PostgreSQL with
 * `--file-storage s3://…` in the local Swift (s3api) the tests use:
 *
 *  a. a table of N rows × 10 columns: prepare + upload (gex's own client, StorageFiles) + tables-async
 *     + polls, with the bytes in the bucket and with them as database chunks, against the same file
 *     loaded into the embedded PostgreSQL store directly (ProjectTables.load, a process of its own);
 *  b. the server's peak RSS (VmHWM) after uploads, downloads and an import of a ~100 MB and a ~1 GB
 *     file through the bucket: flat when the larger file costs no more than the smaller;
 *  c. upload and download throughput of those files through gex (StorageFiles.upload / download:
 *     whatever path the client takes — through the server or straight to the bucket) against the AWS
 *     SDK writing and reading the same bucket itself (lib-storage Upload with its defaults, GetObject).
 *
 * Everything gex sends goes through StorageFiles, so the figures follow the client's path as it
 * changes (pre-signed uploads). Each size runs on a fresh server and a fresh bucket.
 */
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { StorageApiClient } from '../src/store/remote/storage-api-client.js';
import { StorageFiles } from '../src/store/remote/storage-files.js';
import type { StorageFile } from '../src/store/wire/files.js';
import { runGex, startServe } from '../test/support/cli.js';
import { freshBucket, swiftClient, swiftOrReason, type Swift, type TestBucket } from '../test/support/object-store.js';
import { call } from '../test/support/serve-cluster.js';
import { downloadSize, peakRssMb, runJob } from '../test/support/serve-files.js';
import { TEST_KEY, type BackendFactory } from '../test/support/store.js';
import { embeddedLoad } from './files-bench.js';
import { writeBenchCsv } from './table-load-bench.js';

const MIB = 1048576;
/** (a): serve time / embedded time */
export const LOAD_RATIO_TARGET = 1.5;
/** (c): gex's throughput / the SDK's */
export const THROUGHPUT_RATIO_TARGET = 0.9;
/** (b): the larger file's peak RSS / the smaller's */
export const RSS_GROWTH_TARGET = 1.15;

export interface ServeLoad {
  ms: number;
  uploadMs: number;
  peakRssMb: number;
}

export interface ObjectStoreLoad {
  rows: number;
  fileMb: number;
  embedded: { ms: number; peakRssMb: number };
  /** the bytes as objects in the bucket */
  bucket: ServeLoad;
  /** the bytes as chunk rows in PostgreSQL (no --file-storage) */
  chunks: ServeLoad;
  bucketRatio: number;
  chunksRatio: number;
}

export interface Transfer {
  /** medians of the alternating runs */
  ms: number;
  mbPerSecond: number;
  runsMs: number[];
}

export interface ObjectStoreSize {
  rows: number;
  bytes: number;
  fileMb: number;
  repetitions: number;
  gexUpload: Transfer;
  sdkUpload: Transfer;
  gexDownload: Transfer;
  sdkDownload: Transfer;
  uploadRatio: number;
  downloadRatio: number;
  /** whether gex's client answered a file url of the server's own (false: a pre-signed one) */
  downloadThroughServer: boolean;
  /** the table import of the file from the bucket */
  importMs: number;
  /** the server's VmHWM (MiB) once listening, after the uploads, the downloads, the import */
  serverRssMb: { started: number; afterUploads: number; afterDownloads: number; afterImport: number };
}

export interface ObjectStoreFigures {
  skipped?: string;
  endpoint?: string;
  load?: ObjectStoreLoad;
  sizes?: ObjectStoreSize[];
  /** the largest size's final peak RSS / the smallest's */
  rssGrowth?: number;
  /** the machine's 1-minute load average at the start and the end (shared machines: how noisy) */
  loadAverage?: [number, number];
}

function swiftEnv(swift: Swift): NodeJS.ProcessEnv {
  return {
    AWS_ENDPOINT_URL_S3: swift.endpoint,
    AWS_REGION: swift.region,
    AWS_ACCESS_KEY_ID: swift.accessKeyId,
    AWS_SECRET_ACCESS_KEY: swift.secretAccessKey,
  };
}

interface Served {
  url: string;
  token: string;
  pid: number;
  files: StorageFiles;
  stop(): Promise<void>;
}

/** A gex serve on a fresh store (files in `bucket` when given) with a token and a Storage bucket in.c-bench. */
async function serve(backend: BackendFactory, swift?: Swift, bucket?: TestBucket): Promise<Served> {
  const fresh = await backend.fresh();
  const args = ['--store', fresh.location, '--workers', '0', '--metrics', 'false'];
  if (bucket) args.push('--file-storage', `s3://${bucket.name}/gex`);
  const served = await startServe(args, { ...TEST_KEY, ...(swift ? swiftEnv(swift) : {}) });
  const stop = async () => {
    if (served.child.exitCode === null && served.child.signalCode === null) {
      served.child.kill('SIGTERM');
      await once(served.child, 'exit');
    }
    await fresh.dispose();
  };
  try {
    const created = await runGex(['tokens', 'create', '--description', 'bench', '--store', fresh.location], TEST_KEY);
    const token = created.stdout.trim();
    const answer = await call(served.url, token, 'POST', '/v2/storage/buckets', { name: 'bench', stage: 'in' });
    if (answer.status !== 201) throw new Error(`POST buckets: ${answer.status} ${JSON.stringify(answer.body)}`);
    const files = new StorageFiles(new StorageApiClient({ url: served.url, token }), served.url);
    return { url: served.url, token, pid: served.child.pid!, files, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function upload(served: Served, file: string, size: number): Promise<StorageFile> {
  const uploaded = await served.files.upload(path.basename(file), () => createReadStream(file), size);
  if (uploaded.sizeBytes !== null && uploaded.sizeBytes !== size)
    throw new Error(`file ${uploaded.id}: ${uploaded.sizeBytes} bytes stored, ${size} sent`);
  return uploaded;
}

/** Imports file `fileId` as table in.c-bench.NAME and checks it has `rows` rows. */
async function importTable(served: Served, fileId: string, name: string, rows: number): Promise<void> {
  await runJob(served.url, served.token, '/v2/storage/buckets/in.c-bench/tables-async', {
    name,
    dataFileId: Number(fileId),
  });
  const table = await call(served.url, served.token, 'GET', `/v2/storage/tables/in.c-bench.${name}`);
  const count = (table.body as { rowsCount?: number }).rowsCount;
  if (count !== rows) throw new Error(`table in.c-bench.${name} has ${count} rows, the file ${rows}`);
}

/** prepare + upload + tables-async + polls on a fresh server. */
async function serveLoad(
  backend: BackendFactory,
  file: string,
  rows: number,
  swift?: Swift,
  bucket?: TestBucket,
): Promise<ServeLoad> {
  const served = await serve(backend, swift, bucket);
  try {
    const size = (await stat(file)).size;
    const started = performance.now();
    const uploaded = await upload(served, file, size);
    const uploadMs = Math.round(performance.now() - started);
    await importTable(served, uploaded.id, 'rows', rows);
    const ms = Math.round(performance.now() - started);
    return { ms, uploadMs, peakRssMb: await peakRssMb(served.pid) };
  } finally {
    await served.stop();
  }
}

function counter(): { sink: Writable; bytes: () => number } {
  let bytes = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      callback();
    },
  });
  return { sink, bytes: () => bytes };
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return Math.round(performance.now() - started);
}

async function sdkUpload(client: S3Client, bucket: string, key: string, file: string): Promise<void> {
  await new Upload({ client, params: { Bucket: bucket, Key: key, Body: createReadStream(file) } }).done();
}

async function sdkDownload(client: S3Client, bucket: string, key: string, size: number): Promise<void> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const { sink, bytes } = counter();
  await pipeline(answer.Body as Readable, sink);
  if (bytes() !== size) throw new Error(`GetObject ${key}: ${bytes()} bytes, ${size} expected`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : Math.round((sorted[middle - 1] + sorted[middle]) / 2);
}

function transfer(runsMs: number[], bytes: number): Transfer {
  const ms = median(runsMs);
  return { ms, runsMs, mbPerSecond: Math.round((bytes / MIB / (ms / 1000)) * 10) / 10 };
}

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

/**
 * One file of `rows` rows through the bucket: `repetitions` alternating pairs of uploads (gex's
 * client, then the SDK; the next pair the other way round), then of downloads, then an import.
 */
async function sizeFigure(
  backend: BackendFactory,
  swift: Swift,
  file: string,
  rows: number,
  repetitions: number,
): Promise<ObjectStoreSize> {
  const bytes = (await stat(file)).size;
  const bucket = await freshBucket(swift);
  const client = swiftClient(swift);
  try {
    const served = await serve(backend, swift, bucket);
    try {
      const started = await peakRssMb(served.pid);
      const gexUp: number[] = [];
      const sdkUp: number[] = [];
      const files: StorageFile[] = [];
      for (let i = 0; i < repetitions; i++) {
        const gex = async () => gexUp.push(await timed(async () => files.push(await upload(served, file, bytes))));
        const sdk = async () => sdkUp.push(await timed(() => sdkUpload(client, bucket.name, `sdk/${i}`, file)));
        if (i % 2 === 0) {
          await gex();
          await sdk();
        } else {
          await sdk();
          await gex();
        }
      }
      const afterUploads = await peakRssMb(served.pid);
      const gexDown: number[] = [];
      const sdkDown: number[] = [];
      const detail = await served.files.get(files[0].id);
      const contentUrl = `${served.url}/v2/storage/files/${detail.id}/content`;
      const throughServer = new URL(detail.url).origin === new URL(served.url).origin;
      for (let i = 0; i < repetitions; i++) {
        const gex = async () =>
          gexDown.push(
            await timed(async () => {
              const { sink, bytes: counted } = counter();
              const got = await served.files.download(await served.files.get(files[i].id), sink);
              if (got !== bytes || counted() !== bytes)
                throw new Error(`download of file ${files[i].id}: ${got} bytes`);
            }),
          );
        const sdk = async () => sdkDown.push(await timed(() => sdkDownload(client, bucket.name, `sdk/${i}`, bytes)));
        if (i % 2 === 0) {
          await sdk();
          await gex();
        } else {
          await gex();
          await sdk();
        }
      }
      // the server's own content route streams the object whatever address the client was given
      if (!throughServer) {
        const got = await downloadSize(served.url, served.token, Number(detail.id));
        if (got !== bytes) throw new Error(`GET ${contentUrl}: ${got} bytes`);
      }
      const afterDownloads = await peakRssMb(served.pid);
      const importMs = await timed(() => importTable(served, files[0].id, 'rows', rows));
      const afterImport = await peakRssMb(served.pid);
      const gexUpload = transfer(gexUp, bytes);
      const sdkUploadFigure = transfer(sdkUp, bytes);
      const gexDownload = transfer(gexDown, bytes);
      const sdkDownloadFigure = transfer(sdkDown, bytes);
      return {
        rows,
        bytes,
        fileMb: Math.round(bytes / MIB),
        repetitions,
        gexUpload,
        sdkUpload: sdkUploadFigure,
        gexDownload,
        sdkDownload: sdkDownloadFigure,
        uploadRatio: ratio(gexUpload.mbPerSecond, sdkUploadFigure.mbPerSecond),
        downloadRatio: ratio(gexDownload.mbPerSecond, sdkDownloadFigure.mbPerSecond),
        downloadThroughServer: throughServer,
        importMs,
        serverRssMb: { started, afterUploads, afterDownloads, afterImport },
      };
    } finally {
      await served.stop();
    }
  } finally {
    client.destroy();
    await bucket.remove();
  }
}

export interface ObjectStoreShape {
  /** rows of (a) and of the smaller file of (b, c) */
  loadRows: number;
  /** rows of the larger file */
  largeRows: number;
  /** alternating pairs for the smaller / the larger file */
  repetitions: [number, number];
}

export async function objectStoreFigures(
  backend: BackendFactory,
  shape: ObjectStoreShape,
): Promise<ObjectStoreFigures> {
  const swift = await swiftOrReason();
  if (typeof swift === 'string') return { skipped: swift };
  const loadAtStart = Math.round(os.loadavg()[0] * 10) / 10;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-object-store-bench-'));
  try {
    const file = path.join(dir, 'rows.csv');
    await writeBenchCsv(file, shape.loadRows, 0, 'bench');
    const fileMb = Math.round((await stat(file)).size / MIB);
    const embedded = await embeddedLoad(backend, file);
    const chunks = await serveLoad(backend, file, shape.loadRows);
    const bucket = await freshBucket(swift);
    let inBucket: ServeLoad;
    try {
      inBucket = await serveLoad(backend, file, shape.loadRows, swift, bucket);
    } finally {
      await bucket.remove();
    }
    const load: ObjectStoreLoad = {
      rows: shape.loadRows,
      fileMb,
      embedded,
      bucket: inBucket,
      chunks,
      bucketRatio: ratio(inBucket.ms, embedded.ms),
      chunksRatio: ratio(chunks.ms, embedded.ms),
    };
    const sizes = [await sizeFigure(backend, swift, file, shape.loadRows, shape.repetitions[0])];
    await rm(file);
    await writeBenchCsv(file, shape.largeRows, 0, 'bench');
    sizes.push(await sizeFigure(backend, swift, file, shape.largeRows, shape.repetitions[1]));
    const rssGrowth = ratio(sizes[1].serverRssMb.afterImport, sizes[0].serverRssMb.afterImport);
    const loadAverage: [number, number] = [loadAtStart, Math.round(os.loadavg()[0] * 10) / 10];
    return { endpoint: swift.endpoint, load, sizes, rssGrowth, loadAverage };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const verdict = (ok: boolean) => (ok ? 'target met' : 'TARGET MISSED');

/** The section's table, a line each. */
export function describeObjectStore(f: ObjectStoreFigures): string[] {
  if (f.skipped) return [`!!! SKIPPED (object store): ${f.skipped}`];
  const l = f.load!;
  const load = (name: string, s: ServeLoad, r: number) =>
    `  ${name.padEnd(28)} ${String(s.ms).padStart(7)} ms (upload ${String(s.uploadMs).padStart(6)} ms)  server peak RSS ${String(s.peakRssMb).padStart(4)} MB  / embedded ${r.toFixed(2)}`;
  const lines = [
    `a. PostgreSQL, ${l.rows.toLocaleString('en')} rows × 10 columns (${l.fileMb} MB CSV): prepare + upload + tables-async + polls vs the embedded load`,
    `  ${'embedded (ProjectTables.load)'.padEnd(28)} ${String(l.embedded.ms).padStart(7)} ms ${''.padEnd(20)}  peak RSS ${String(l.embedded.peakRssMb).padStart(4)} MB`,
    load('gex serve, files in bucket', l.bucket, l.bucketRatio) +
      ` (${verdict(l.bucketRatio <= LOAD_RATIO_TARGET)}: <= ${LOAD_RATIO_TARGET})`,
    load('gex serve, database chunks', l.chunks, l.chunksRatio) + ' (for comparison)',
    `b, c. files through the bucket (${f.endpoint}), a fresh gex serve on PostgreSQL each; medians of alternating runs`,
    `  ${'file'.padEnd(10)} ${'runs'.padEnd(4)} ${'gex up'.padStart(10)} ${'SDK up'.padStart(10)} ${'ratio'.padStart(5)}   ${'gex down'.padStart(10)} ${'SDK down'.padStart(10)} ${'ratio'.padStart(5)}   ${'import'.padStart(8)}   server peak RSS: start / uploads / downloads / import`,
  ];
  for (const s of f.sizes!) {
    const mbps = (t: Transfer) => `${t.mbPerSecond.toFixed(1)} MB/s`.padStart(10);
    lines.push(
      `  ${`${s.fileMb} MB`.padEnd(10)} ${String(s.repetitions).padEnd(4)} ${mbps(s.gexUpload)} ${mbps(s.sdkUpload)} ${s.uploadRatio.toFixed(2).padStart(5)}   ` +
        `${mbps(s.gexDownload)} ${mbps(s.sdkDownload)} ${s.downloadRatio.toFixed(2).padStart(5)}   ${`${(s.importMs / 1000).toFixed(1)} s`.padStart(8)}   ` +
        `${s.serverRssMb.started} / ${s.serverRssMb.afterUploads} / ${s.serverRssMb.afterDownloads} / ${s.serverRssMb.afterImport} MB` +
        (s.downloadThroughServer ? '' : ' (client downloads pre-signed; the server streamed /content once)'),
    );
  }
  const [small, large] = f.sizes!;
  const ok = (r: number) => r >= THROUGHPUT_RATIO_TARGET;
  lines.push(
    `  throughput gex / SDK at ${large.fileMb} MB: upload ${large.uploadRatio.toFixed(2)} (${verdict(ok(large.uploadRatio))}: >= ${THROUGHPUT_RATIO_TARGET}), ` +
      `download ${large.downloadRatio.toFixed(2)} (${verdict(ok(large.downloadRatio))}: >= ${THROUGHPUT_RATIO_TARGET}); at ${small.fileMb} MB: ${small.uploadRatio.toFixed(2)} / ${small.downloadRatio.toFixed(2)}`,
    `  server peak RSS ${large.fileMb} MB / ${small.fileMb} MB: ${large.serverRssMb.afterImport} / ${small.serverRssMb.afterImport} MB = ${f.rssGrowth!.toFixed(2)} ` +
      `(${verdict(f.rssGrowth! <= RSS_GROWTH_TARGET)}: flat, <= ${RSS_GROWTH_TARGET})`,
    `  load average (1 min) ${f.loadAverage![0]} at the start, ${f.loadAverage![1]} at the end`,
  );
  return lines;
}
