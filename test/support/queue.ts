import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { gexBin } from './cli.js';

export type Json = Record<string, any>;

/** One call to a gex server's API with a token; the status and the parsed body. */
export async function call(
  url: string,
  token: string,
  method: string,
  pathAndQuery: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${url}${pathAndQuery}`, {
    method,
    headers: {
      'X-StorageApi-Token': token,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
}

/** The job once `done` says so (default: finished), polled every 50 ms. */
export async function untilJob(
  url: string,
  token: string,
  id: string,
  timeoutMs = 20_000,
  done: (job: Json) => boolean = (job) => job.isFinished === true,
): Promise<Json> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const job = (await call(url, token, 'GET', `/jobs/${id}`)).body;
    if (done(job)) return job;
    if (Date.now() > end) throw new Error(`job ${id} not as expected in ${timeoutMs} ms: ${JSON.stringify(job)}`);
    await sleep(50);
  }
}

/** A job's last log lines (newest last), to put in a failed assertion's message. */
export async function jobLogTail(url: string, token: string, job: Json, lines = 30): Promise<string> {
  const events = await call(
    url,
    token,
    'GET',
    `/v2/storage/events?runId=${encodeURIComponent(job.runId)}&limit=${lines}`,
  );
  if (!Array.isArray(events.body)) return `(no log: ${events.status})`;
  return (events.body as Json[])
    .map((e) => `${e.type} ${e.message}`)
    .reverse()
    .join('\n');
}

export const untilFinished = (url: string, token: string, id: string, timeoutMs = 20_000) =>
  untilJob(url, token, id, timeoutMs);

/** the `gex run` processes a server or worker started (they carry its pid in their environment) */
export async function childrenOf(parentPid: number): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'utf8').catch(() => '');
    if (environ.split('\0').includes(`GEX_JOB_PARENT_PID=${parentPid}`)) found.push(Number(entry));
  }
  return found;
}

export interface Worker {
  child: ChildProcess;
  output: () => string;
}

/** Starts `gex worker` on `store` and resolves once it says it is ready. */
export function startWorker(store: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<Worker> {
  const child = spawn(process.execPath, [gexBin, 'worker', '--store', store, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Worker ready')) resolve({ child, output: () => output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`gex worker exited with ${code}: ${output}`)));
  });
}
