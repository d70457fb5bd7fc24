import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { repoRoot } from './measure.js';
import type { PagedServerOptions, PagedServerStats } from './paged-server.js';

export type RecordShape = PagedServerOptions['shape'];

export interface PagedServerProcess {
  url: string;
  stats(): Promise<PagedServerStats>;
  stop(): void;
}

/**
 * Starts bench/paged-server in its own process, so serving pages does not share the event loop
 * (or the CPU time measurement) with the client being measured.
 */
export async function startPagedServer(options: PagedServerOptions): Promise<PagedServerProcess> {
  const child: ChildProcess = fork(path.join(repoRoot, 'dist', 'bench', 'paged-server.js'), [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const [first] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`the paged server exited (${code}) before it listened`);
    }),
  ])) as [{ url: string }];
  return {
    url: first.url,
    async stats() {
      child.send({ type: 'stats' });
      const [reply] = (await once(child, 'message')) as [{ stats: PagedServerStats }];
      return reply.stats;
    },
    stop: () => child.kill(),
  };
}
