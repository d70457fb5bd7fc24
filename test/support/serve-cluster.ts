import type { ChildProcess } from 'node:child_process';
import { runGex, startServe } from './cli.js';

/**
 * Several real `gex serve` processes on one store, and a load of concurrent configuration updates
 * spread across them — the "several gex servers, one database" test and the bench's figure.
 */

const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';

export interface ServeCluster {
  urls: string[];
  token: string;
  stop(): Promise<void>;
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * Starts `count` servers on `location` at the same time (so a fresh store is migrated by racing
 * processes) and creates a token with `gex tokens create`.
 */
export async function startServeCluster(
  location: string,
  count: number,
  env: NodeJS.ProcessEnv,
): Promise<ServeCluster> {
  const started = await Promise.allSettled(Array.from({ length: count }, () => startServe(['--store', location], env)));
  const children = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value.child] : []));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(children.map(stopped));
    throw failed.reason;
  }
  const stop = () => Promise.all(children.map(stopped)).then(() => undefined);
  const created = await runGex(['tokens', 'create', '--description', 'cluster', '--store', location], env);
  if (created.code !== 0) {
    await stop();
    throw new Error(`gex tokens create failed: ${created.stderr}`);
  }
  const urls = started.map((s) => (s as PromiseFulfilledResult<{ url: string }>).value.url);
  return { urls, token: created.stdout.trim(), stop };
}

export interface ApiCall {
  status: number;
  /** JSON.parse of the response body: callers walk arbitrary shapes */
  body: any;
}

export async function call(url: string, token: string, method: string, path: string, json?: unknown): Promise<ApiCall> {
  const response = await fetch(url + path, {
    method,
    headers: { 'X-StorageApi-Token': token, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

export interface UpdateLoad {
  /** one entry per update, in the order fired */
  results: Array<{ server: number; changeDescription: string; status: number; version?: number; error?: string }>;
  wallMs: number;
  updatesPerSecond: number;
}

/**
 * Fires `total` updates of one configuration at once, round-robin across the servers, each with
 * its own configuration body and change description; returns every answer and the rate.
 */
export async function fireConcurrentUpdates(
  cluster: ServeCluster,
  configId: string,
  total: number,
): Promise<UpdateLoad> {
  const started = process.hrtime.bigint();
  const results = await Promise.all(
    Array.from({ length: total }, async (_, i) => {
      const server = i % cluster.urls.length;
      const changeDescription = `update ${i} via server ${server}`;
      const res = await call(cluster.urls[server], cluster.token, 'PUT', `${CONFIGS}/${configId}`, {
        configuration: { n: i },
        changeDescription,
      });
      return {
        server,
        changeDescription,
        status: res.status,
        version: res.body?.version,
        error: res.status === 200 ? undefined : JSON.stringify(res.body),
      };
    }),
  );
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  return { results, wallMs, updatesPerSecond: Math.round(total / (wallMs / 1000)) };
}

/** Creates a configuration through the first server; returns its id. */
export async function createConfiguration(cluster: ServeCluster, name: string): Promise<string> {
  const res = await call(cluster.urls[0], cluster.token, 'POST', CONFIGS, { name, configuration: { n: -1 } });
  if (res.status !== 201) throw new Error(`create configuration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return String(res.body.id);
}

/** Every version of a configuration, newest first. */
export async function listVersions(
  cluster: ServeCluster,
  configId: string,
  server = 0,
): Promise<Array<{ version: number; changeDescription: string; configuration: unknown }>> {
  const res = await call(
    cluster.urls[server],
    cluster.token,
    'GET',
    `${CONFIGS}/${configId}/versions?include=configuration&limit=100000`,
  );
  if (res.status !== 200) throw new Error(`list versions failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
