/**
 * `gex serve`'s HTTP app on a fresh embedded store, in its own process, for the load generator:
 * seeds one configuration (a few rows, like a typical one). The app is built as `gex serve` builds
 * it: the request log at info through gex's masking logger (into /dev/null) and metrics on. A
 * second gex app on the same store has the read cache turned off (every request decodes and
 * encodes); a third is bare — no logger, no metrics — to measure what operating costs. The
 * yardstick is a trivial JSON route on a Fastify app in the same process (gex's apps are sealed
 * once built). Reports `{url, uncachedUrl, bareUrl, trivialUrl, token, configId}` over IPC.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { buildServer } from '../src/server/app.js';
import { builtinComponents } from '../src/cli/builtin-components.js';
import { createLogger } from '../src/common/logger.js';
import { openEmbeddedStore } from '../src/store/open-store.js';
import { configurationOfSize } from './store-bench.js';

const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-serve-bench-'));
const backend = await openEmbeddedStore(
  path.join(dir, 'store.sqlite'),
  { GEX_MASTER_KEY: '22'.repeat(32) },
  { builtinComponents: builtinComponents() },
);
const store = await backend.localSession();
const config = await store.createConfiguration('ex-generic-v2', {
  name: 'typical',
  configuration: configurationOfSize(4 * 1024, 1),
});
for (let i = 0; i < 3; i++)
  await store.createRow('ex-generic-v2', config.id, { name: `row ${i}`, configuration: configurationOfSize(1024, i) });
const { token } = await backend.createToken({ description: 'bench' });
const logger = createLogger({ level: 'info', stdout: createWriteStream('/dev/null'), batchStdout: true });
const app = await buildServer({ backend, logger, metrics: true });
const url = await app.listen({ port: 0, host: '127.0.0.1' });
const bare = await buildServer({ backend });
const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' });
const uncached = await buildServer({ backend, logger, metrics: true, readCache: false });
const uncachedUrl = await uncached.listen({ port: 0, host: '127.0.0.1' });
const trivial = Fastify({ logger: false });
trivial.get('/trivial', async () => ({ ok: true }));
const trivialUrl = `${await trivial.listen({ port: 0, host: '127.0.0.1' })}/trivial`;
process.send?.({ url, uncachedUrl, bareUrl, trivialUrl, token, configId: config.id });
process.on('SIGTERM', () => {
  void Promise.all([app.close(), bare.close(), uncached.close(), trivial.close()])
    .then(() => backend.close())
    .then(() => rm(dir, { recursive: true, force: true }))
    .then(() => process.exit(0));
});
