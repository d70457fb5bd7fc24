import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_UPLOAD_MEMORY } from '../../src/server/http/limits.js';
import { repoRoot, runGex, startServe } from '../support/cli.js';
import { call } from '../support/serve-cluster.js';
import { metricValue, peakRssMb, rawUpload, type RawUpload } from '../support/serve-files.js';
import { storeBackends, TEST_KEY } from '../support/store.js';

/**
 * STRESS (npm run test:stress), issue 33 item 4 at its reported size: 300 stalled uploads against
 * a `gex serve` with the default upload memory (64 MiB) — its RSS grows by about that, not by the
 * 225 MiB they held before — and 200 uploads of 4 MiB at once, each retried after its 503, while
 * /health keeps answering. The bounds are generous (a shared 2-core machine); the figures are
 * printed (docs/operations.md#memory). Measured before the change: 300 stalled uploads +268 MiB
 * (SQLite); 200 uploads at once held the event loop 1.4–2.5 s and /health answered in up to 2.4 s.
 */

const S = '/v2/storage';
const MiB = 1024 * 1024;
const STALLED = 300;
const AT_ONCE = 200;
const FILE_BYTES = 4 * MiB;
/** RSS the stalled uploads may add beyond the upload memory itself: sockets, requests, garbage */
const RSS_MARGIN_MB = 96;

async function prepare(url: string, token: string): Promise<number> {
  const prepared = await call(url, token, 'POST', `${S}/files/prepare`, { name: 'stress.bin' });
  assert.equal(prepared.status, 200);
  return prepared.body.id as number;
}

/** PUTs `bytes`, again after each 503 as its Retry-After says; returns the attempts it took. */
async function putWithRetries(url: string, token: string, id: number, bytes: Buffer): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${url}${S}/files/${id}/content`, {
      method: 'PUT',
      headers: { 'X-StorageApi-Token': token },
      body: bytes,
    });
    const text = await response.text();
    if (response.status === 200) return attempt;
    assert.equal(response.status, 503, text);
    const wait = Number(response.headers.get('retry-after'));
    assert.ok(wait > 0, `a 503 without Retry-After: ${text}`);
    // from half the wait to all of it, as a client with jitter would
    await new Promise((resolve) => setTimeout(resolve, wait * 1000 * (0.5 + Math.random() / 2)));
  }
}

for (const factory of storeBackends()) {
  describe(`gex serve under many uploads (${factory.name})`, function () {
    this.timeout(900_000);

    it(`holds ${STALLED} stalled uploads within the upload memory, and takes ${AT_ONCE} uploads at once with /health answering`, async () => {
      const store = await factory.fresh();
      const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-upload-stress-'));
      const probe = path.join(dir, 'loop-delay.json');
      const served = await startServe(['--store', store.location, '--workers', '0'], {
        ...TEST_KEY,
        GEX_LOOP_DELAY_PROBE: probe,
        NODE_OPTIONS: `--import ${path.join(repoRoot, 'test', 'support', 'loop-delay-probe.mjs')}`,
      });
      const exited = once(served.child, 'exit');
      const sockets: RawUpload[] = [];
      try {
        const { url } = served;
        const created = await runGex(
          ['tokens', 'create', '--description', 'stress', '--store', store.location],
          TEST_KEY,
        );
        const token = created.stdout.trim();
        const ids: number[] = [];
        for (let i = 0; i < STALLED; i++) ids.push(await prepare(url, token));
        const before = await peakRssMb(served.child.pid!);
        served.child.kill('SIGUSR2');

        // each announces a little more than a chunk and sends 900 KiB of it
        const piece = Buffer.alloc(900 * 1024, 120);
        for (const id of ids) sockets.push(rawUpload(url, token, id, piece.length + 1000, piece));
        // every upload is held or refused
        for (;;) {
          const held = (await metricValue(url, 'gex_upload_memory_bytes'))!;
          const refused = sockets.filter((s) => s.answered()).length;
          if (held / (piece.length + 1000) + refused >= STALLED) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const held = (await metricValue(url, 'gex_upload_memory_bytes'))!;
        const refused = sockets.filter((s) => s.answered()).length;
        assert.ok(held <= DEFAULT_UPLOAD_MEMORY, `uploads hold ${held} bytes`);
        assert.ok(refused > 0 && refused < STALLED, `${refused} refused`);
        // the bytes sent reach the server (and its chunks) before the memory is read
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const growth = (await peakRssMb(served.child.pid!)) - before;
        console.log(
          `      ${STALLED} stalled uploads: ${STALLED - refused} held (${(held / MiB).toFixed(1)} MiB), ${refused} refused with 503; peak RSS +${growth} MB`,
        );
        assert.ok(
          growth < DEFAULT_UPLOAD_MEMORY / MiB + RSS_MARGIN_MB,
          `gex serve grew by ${growth} MB for ${STALLED} stalled uploads`,
        );
        assert.equal((await fetch(`${url}/health`)).status, 200);
        for (const s of sockets) s.socket.destroy();
        for (;;) {
          if ((await metricValue(url, 'gex_upload_memory_bytes')) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }

        // AT_ONCE uploads of 4 MiB at once, each retried after its 503; /health polled meanwhile
        const bytes = Buffer.alloc(FILE_BYTES, 7);
        const files = ids.slice(0, AT_ONCE);
        let uploading = true;
        const health: number[] = [];
        const probing = (async () => {
          while (uploading) {
            const started = performance.now();
            assert.equal((await fetch(`${url}/health`)).status, 200);
            health.push(performance.now() - started);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })();
        const started = performance.now();
        const attempts = await Promise.all(files.map((id) => putWithRetries(url, token, id, bytes))).finally(
          () => (uploading = false),
        );
        const seconds = (performance.now() - started) / 1000;
        await probing;
        for (const id of files.slice(0, 5))
          assert.equal((await call(url, token, 'GET', `${S}/files/${id}`)).body.sizeBytes, FILE_BYTES);
        served.child.kill('SIGTERM');
        await exited;
        const { maxDelayMs } = JSON.parse(await readFile(probe, 'utf8')) as { maxDelayMs: number };
        const slowest = Math.max(...health);
        console.log(
          `      ${AT_ONCE} × 4 MiB at once: ${seconds.toFixed(1)} s, ${attempts.reduce((a, b) => a + b, 0) - AT_ONCE} retries after 503; ` +
            `/health ${health.length} times, slowest ${slowest.toFixed(0)} ms; event loop held at most ${maxDelayMs.toFixed(0)} ms`,
        );
        // generous: the clients, the server and PostgreSQL share two cores, and every refused 4 MiB
        // body is read and dropped (its client then reads the 503 whole); the figures are printed
        assert.ok(slowest < 5000, `/health took ${slowest.toFixed(0)} ms`);
        assert.ok(maxDelayMs < 1000, `the event loop was held ${maxDelayMs.toFixed(0)} ms at once`);
      } finally {
        for (const s of sockets) s.socket.destroy();
        served.child.kill('SIGTERM');
        await rm(dir, { recursive: true, force: true });
        await store.dispose();
      }
    });
  });
}
