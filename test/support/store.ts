import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { openEmbeddedStore } from '../../src/store/open-store.js';

export interface BackendFactory {
  name: string;
  open(): Promise<{ backend: EmbeddedBackend; dispose(): Promise<void> }>;
}

const TEST_KEY = { GEX_MASTER_KEY: '11'.repeat(32) };

/** The embedded backends the store suite runs against (PostgreSQL joins in issue 6). */
export function storeBackends(): BackendFactory[] {
  return [
    {
      name: 'SQLite',
      async open() {
        const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-store-'));
        const backend = await openEmbeddedStore(path.join(dir, 'store.sqlite'), TEST_KEY);
        return {
          backend,
          async dispose() {
            await backend.close();
            await rm(dir, { recursive: true, force: true });
          },
        };
      },
    },
  ];
}
