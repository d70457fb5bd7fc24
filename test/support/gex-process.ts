import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { startFixtureServer, type FixtureServer } from './fixture-server/fixture-server.js';
import { fromPlain, toPlain } from '../../src/json/index.js';
import { openEmbeddedStore } from './open-store.js';
import { gexBin } from './cli.js';
import { track } from './children.js';

/** A `gex` process the test can signal, with its output and its end (exit code or killing signal). */
export interface GexProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** resolves once the output matches `pattern` (rejects if the process ends first) */
  waitFor(pattern: RegExp): Promise<void>;
}

/** `input`: the test writes to the process's standard input (`child.stdin`); none by default */
export function startGex(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { command?: string[]; input?: boolean } & SpawnOptions = {},
): GexProcess {
  const command = options.command ?? [process.execPath, gexBin];
  const child = track(
    spawn(command[0], [...command.slice(1), ...args], {
      env: { ...process.env, ...env },
      stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    }),
  );
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk;
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => output,
    exited,
    waitFor(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(output)) {
            listeners.delete(check);
            resolve();
          }
        };
        listeners.add(check);
        check();
        void exited.then(() => {
          if (listeners.has(check)) reject(new Error(`gex ended before printing ${pattern}: ${output}`));
        });
      });
    },
  };
}

/**
 * A paged API (`GET /api/users?page=N` → `{items: [{id: N}]}`, pagenum pagination) that answers
 * pages below `holdFrom` at once and holds later pages until `release()`; after it, the page
 * `holdFrom` is empty and ends the run. `requested(n)` resolves once n requests have arrived.
 */
export class HoldingApi {
  private gate!: () => void;
  private readonly opened = new Promise<void>((resolve) => (this.gate = resolve));
  private readonly waiters: Array<{ n: number; resolve: () => void }> = [];
  private count = 0;

  private constructor(
    private readonly server: FixtureServer,
    readonly holdFrom: number,
  ) {}

  static async start(holdFrom = 3): Promise<HoldingApi> {
    let api: HoldingApi | undefined;
    const server = await startFixtureServer({
      handler: async (request) => {
        const url = new URL(request.url, 'http://x');
        if (url.pathname !== '/api/users') return undefined;
        api!.arrived();
        const page = Number(url.searchParams.get('page') ?? 1);
        if (page >= api!.holdFrom) {
          await api!.opened;
          return { body: { items: [] } };
        }
        return { body: { items: [{ id: page, name: `user ${page}` }] } };
      },
    });
    api = new HoldingApi(server, holdFrom);
    return api;
  }

  get baseUrl(): string {
    return `${this.server.url}/api/`;
  }

  get requests(): number {
    return this.count;
  }

  requested(n: number): Promise<void> {
    if (this.count >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  release(): void {
    this.gate();
  }

  close(): Promise<void> {
    this.release();
    return this.server.close();
  }

  private arrived(): void {
    this.count++;
    for (const w of this.waiters.splice(0)) {
      if (this.count >= w.n) w.resolve();
      else this.waiters.push(w);
    }
  }
}

/** The parameters of a configuration that pages through `api`. */
export function pagedParameters(api: HoldingApi): Record<string, unknown> {
  return {
    api: { baseUrl: api.baseUrl, pagination: { method: 'pagenum' } },
    config: { outputBucket: 'b', jobs: [{ endpoint: 'users', dataField: 'items' }] },
  };
}

/** Stores a configuration with one row paging through `api`; returns its id. */
export async function storePagedConfiguration(
  location: string,
  env: NodeJS.ProcessEnv,
  api: HoldingApi,
): Promise<string> {
  const backend = await openEmbeddedStore(location, env);
  try {
    const store = await backend.localSession();
    const c = await store.createConfiguration('ex-generic-v2', {
      name: 'paged',
      configuration: fromPlain({ parameters: pagedParameters(api) }),
    });
    await store.createRow('ex-generic-v2', c.id, {
      rowId: 'users',
      name: 'Users',
      configuration: fromPlain({ parameters: { config: { jobs: [{ endpoint: 'users', dataField: 'items' }] } } }),
    });
    return c.id;
  } finally {
    await backend.close();
  }
}

/** The stored component state of every row of a configuration. */
export async function rowStates(
  location: string,
  env: NodeJS.ProcessEnv,
  configId: string,
): Promise<Record<string, unknown>> {
  const backend = await openEmbeddedStore(location, env);
  try {
    const store = await backend.localSession();
    const c = await store.getConfiguration('ex-generic-v2', configId);
    return Object.fromEntries(c.rows.map((r) => [r.id, toPlain(r.state)]));
  } finally {
    await backend.close();
  }
}
