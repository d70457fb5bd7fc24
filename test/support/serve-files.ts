import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { pipeline } from 'node:stream/promises';
import { call } from './serve-cluster.js';

/**
 * File Storage through a real `gex serve`, for the stress tests and the bench: a file uploaded
 * from disk as a stream, uploads over raw sockets that stall, jobs polled, a process's peak RSS,
 * its metrics.
 */

const S = '/v2/storage';

/** Prepares a file and PUTs `file` (streamed from disk, with its Content-Length); returns the file id. */
export async function uploadFromDisk(url: string, token: string, file: string, name = 'data.csv'): Promise<number> {
  const prepared = await call(url, token, 'POST', `${S}/files/prepare`, { name });
  if (prepared.status !== 200) throw new Error(`prepare: ${prepared.status} ${JSON.stringify(prepared.body)}`);
  const target = new URL((prepared.body as { uploadParams: { url: string } }).uploadParams.url);
  const size = (await stat(file)).size;
  const status = await new Promise<number>((resolve, reject) => {
    const request = http.request(
      target,
      { method: 'PUT', headers: { 'X-StorageApi-Token': token, 'Content-Length': String(size) } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    pipeline(createReadStream(file), request).catch(reject);
  });
  if (status !== 200) throw new Error(`upload: ${status}`);
  return (prepared.body as { id: number }).id;
}

/** Polls a Storage job until it has finished; throws when it ended `error`. */
export async function jobResult(url: string, token: string, jobId: number): Promise<Record<string, unknown>> {
  for (;;) {
    const res = await call(url, token, 'GET', `${S}/jobs/${jobId}`);
    const job = res.body as { status: string; results: Record<string, unknown>; error: unknown };
    if (job.status === 'success') return job.results;
    if (job.status === 'error') throw new Error(`job ${jobId} failed: ${JSON.stringify(job.error)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Starts a job with `fields` and waits for its results. */
export async function runJob(
  url: string,
  token: string,
  path: string,
  fields: unknown,
): Promise<Record<string, unknown>> {
  const started = await call(url, token, 'POST', path, fields);
  if (started.status !== 202) throw new Error(`${path}: ${started.status} ${JSON.stringify(started.body)}`);
  return jobResult(url, token, (started.body as { id: number }).id);
}

/** The peak resident memory of process `pid` so far, in MiB (Linux: VmHWM). */
export async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(status);
  if (!kb) throw new Error(`no VmHWM for process ${pid}`);
  return Math.round(Number(kb[1]) / 1024);
}

/** Downloads a file's content, counting its bytes without keeping them. */
export async function downloadSize(url: string, token: string, fileId: number): Promise<number> {
  const response = await fetch(`${url}${S}/files/${fileId}/content`, { headers: { 'X-StorageApi-Token': token } });
  if (response.status !== 200 || !response.body) throw new Error(`download: ${response.status}`);
  let bytes = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return bytes;
}

/** One value of a server's `GET /metrics` (a metric without labels); undefined when it has none. */
export async function metricValue(url: string, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const found = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return found ? Number(found[1]) : undefined;
}

export interface RawUpload {
  socket: net.Socket;
  /** everything the server answered, once it closed the connection or `answered()` saw a whole answer */
  answer: Promise<string>;
  /** whether an answer's head has arrived */
  answered(): boolean;
}

/**
 * A PUT of file `fileId` over a socket of its own: the head announces `declared` bytes
 * (Content-Length; undefined: chunked), `sent` bytes of them are written, and the upload stalls
 * there until the caller ends or destroys the socket.
 */
export function rawUpload(
  url: string,
  token: string,
  fileId: number,
  declared: number | undefined,
  sent: Buffer,
): RawUpload {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let text = '';
  const answer = new Promise<string>((resolve) => {
    socket.on('data', (d: Buffer) => {
      text += d.toString();
      // a whole answer with its body: keep-alive connections stay open after it
      const head = /\r\n\r\n/.exec(text);
      const length = /content-length: (\d+)/i.exec(text);
      if (head && length && text.length - head.index - 4 >= Number(length[1])) resolve(text);
    });
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
  });
  const length = declared === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${declared}`;
  socket.write(
    `PUT /v2/storage/files/${fileId}/content HTTP/1.1\r\nHost: ${hostname}\r\nX-StorageApi-Token: ${token}\r\n${length}\r\n\r\n`,
  );
  if (sent.length > 0 && declared === undefined)
    socket.write(Buffer.concat([Buffer.from(`${sent.length.toString(16)}\r\n`), sent, Buffer.from('\r\n')]));
  else if (sent.length > 0) socket.write(sent);
  return { socket, answer, answered: () => text.startsWith('HTTP/') };
}
