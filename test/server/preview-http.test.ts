import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/server/app.js';
import type { PreviewLimits } from '../../src/server/storage/table-preview.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { ProjectTables } from '../../src/store/tables/index.js';
import { repoRoot, startServe } from '../support/cli.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { describeEachBackend, useTestServer } from '../support/storage-api-server.js';

/**
 * Data previews through a real server (issue 23 item 7): the byte limit of one answer and of all
 * answers held at once as clients see them, and a real `gex serve` process whose memory stays
 * bounded and which keeps answering other clients while wide previews are built.
 */

/** `rows` rows of `columns` columns (`column_<i>`), one-digit values: 1,000 × 1,000 is 3 MB of CSV. */
function wideCsv(rows: number, columns: number): string {
  const lines = [Array.from({ length: columns }, (_, i) => `column_${i}`).join(',')];
  for (let r = 0; r < rows; r++)
    lines.push(Array.from({ length: columns }, (_, i) => String((r * 7 + i) % 10)).join(','));
  return `${lines.join('\n')}\n`;
}

async function loadCsv(backend: EmbeddedBackend, token: string, tableId: string, csv: string): Promise<void> {
  const info = await backend.authenticate(token);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-preview-'));
  try {
    await writeFile(path.join(dir, 'data.csv'), csv);
    await new ProjectTables(backend.db, info!.projectId).load(path.join(dir, 'data.csv'), { destination: tableId });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A GET's answer, and when the request has been written out whole (`sent`). */
function send(url: string, token: string): { sent: Promise<void>; answer: Promise<Answer> } {
  let sent!: Promise<void>;
  const answer = new Promise<Answer>((resolve, reject) => {
    const request = http.get(url, { headers: { 'X-StorageApi-Token': token } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    request.on('error', reject);
    sent = new Promise((resolve) => request.once('finish', resolve));
  });
  return { sent, answer };
}

function get(url: string, token: string): Promise<Answer> {
  return send(url, token).answer;
}

describeEachBackend('server: data-preview limits over HTTP', (backend) => {
  const server = useTestServer({ backend });
  let token: string;
  const servers: FastifyInstance[] = [];
  const preview = '/v2/storage/tables/in.c-wide.t/data-preview';

  /** Another server on the same store, with these preview limits. */
  async function limited(previews: PreviewLimits): Promise<string> {
    const app = await buildServer({ backend: server().backend, previews });
    servers.push(app);
    return app.listen({ port: 0, host: '127.0.0.1' });
  }

  before(async () => {
    token = await server().createToken({ project: 'previews' });
    await loadCsv(server().backend, token, 'in.c-wide.t', wideCsv(400, 50));
  });
  after(async () => {
    for (const app of servers) await app.close();
  });

  it('answers up to the byte limit with Content-Length, and one byte over it with a Keboola error naming the limit and what to ask instead', async () => {
    for (const format of ['rfc', 'json']) {
      const whole = await get(`${server().baseUrl}${preview}?limit=300&format=${format}`, token);
      assert.equal(whole.status, 200);
      assert.equal(Number(whole.headers['content-length']), whole.body.length);
      const exact = whole.body.length;

      const fits = await get(`${await limited({ maxBytes: exact })}${preview}?limit=300&format=${format}`, token);
      assert.equal(fits.status, 200);
      assert.ok(fits.body.equals(whole.body), 'the same bytes at the limit');

      const over = await get(`${await limited({ maxBytes: exact - 1 })}${preview}?limit=300&format=${format}`, token);
      assert.equal(over.status, 400);
      assert.equal(over.headers['content-type'], 'application/json');
      const error = JSON.parse(over.body.toString());
      assert.equal(error.code, 'storage.tables.previewTooLarge');
      assert.equal(error.status, 'error');
      assert.match(
        error.error,
        new RegExp(
          `in\\.c-wide\\.t would be larger than ${exact - 1} bytes \\(format ${format}, 300 rows asked\\)\\. Ask for fewer rows \\(limit\\) or fewer columns \\(columns\\)`,
        ),
      );
      if (format === 'json') assert.match(error.error, /or use format=rfc/);
    }
  });

  it("answers 503 with Retry-After when previews in flight hold the server's preview budget", async () => {
    const busy = await get(`${await limited({ totalBytes: 10_000 })}${preview}?limit=300`, token);
    assert.equal(busy.status, 503);
    assert.equal(busy.headers['retry-after'], '5');
    const error = JSON.parse(busy.body.toString());
    assert.equal(error.code, 'storage.tables.previewCapacity');
    assert.match(
      error.error,
      /already holding 10000 bytes of data previews for other requests\. Retry in a few seconds/,
    );
  });

  it("gives a preview's bytes back when its client leaves before reading it", async () => {
    const whole = await get(`${server().baseUrl}${preview}?limit=400&format=json`, token);
    assert.equal(whole.status, 200);
    // room for one answer: a second one is served only once the first one's bytes are back
    const url = `${await limited({ totalBytes: whole.body.length })}${preview}?limit=400&format=json`;
    await new Promise<void>((resolve, reject) => {
      const request = http.get(url, { headers: { 'X-StorageApi-Token': token } }, (res) => {
        assert.equal(res.statusCode, 200);
        res.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
    });
    // the server sees the closed connection soon after; until then the budget is (rightly) taken
    let answer: Answer | undefined;
    for (let attempt = 0; attempt < 100 && answer?.status !== 200; attempt++) {
      answer = await get(url, token);
      if (answer.status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(answer!.status, 200, answer!.body.toString().slice(0, 300));
    assert.ok(answer!.body.equals(whole.body));
  });
});

/** Peak resident memory of a process (Linux: VmHWM), in MiB; undefined elsewhere. */
function peakRssMiB(pid: number): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

describe('gex serve: wide data previews (process, SQLite)', function () {
  this.timeout(120_000);
  let dir: string;
  let store: string;
  let token: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-wide-preview-'));
    store = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(store);
    try {
      token = (await backend.createToken({ description: 'read only', readOnly: true })).token;
      await loadCsv(backend, token, 'in.c-wide.t', wideCsv(1000, 1000));
    } finally {
      await backend.close();
    }
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('keeps memory bounded and the event loop turning: JSON of 1,000 × 1,000 refused at the limit, 300 columns streamed', async function () {
    const probe = path.join(dir, 'loop-delay.json');
    const { child, url } = await startServe(['--store', store], {
      GEX_LOOP_DELAY_PROBE: probe,
      NODE_OPTIONS: `--import ${path.join(repoRoot, 'test', 'support', 'loop-delay-probe.mjs')}`,
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      if (peakRssMiB(child.pid!) === undefined) {
        console.warn(
          '    SKIPPED: no /proc/<pid>/status (not Linux): the peak memory of gex serve cannot be read here',
        );
        this.skip();
      }
      const verify = `${url}/v2/storage/tokens/verify`;
      assert.equal((await get(verify, token)).status, 200);
      const before = peakRssMiB(child.pid!)!;
      // from here on, count only how long the previews hold the event loop
      child.kill('SIGUSR2');

      const base = `${url}/v2/storage/tables/in.c-wide.t/data-preview?limit=1000&format=json`;
      const columns = Array.from({ length: 300 }, (_, i) => `column_${i}`).join(',');
      let inFlight = true;
      const big = Promise.all(
        [base, base, `${base}&columns=${columns}`, `${base}&columns=${columns}`].map((u) => get(u, token)),
      ).finally(() => (inFlight = false));
      // another client meanwhile: each of its requests waits only for a batch, not for a whole preview
      const latencies: number[] = [];
      while (inFlight) {
        const started = performance.now();
        assert.equal((await get(verify, token)).status, 200);
        latencies.push(performance.now() - started);
      }
      const answers = await big;

      for (const refused of answers.slice(0, 2)) {
        assert.equal(refused.status, 400);
        assert.equal(JSON.parse(refused.body.toString()).code, 'storage.tables.previewTooLarge');
      }
      for (const served of answers.slice(2)) {
        assert.equal(served.status, 200);
        const body = JSON.parse(served.body.toString());
        assert.equal(body.rows.length, 1000);
        assert.equal(body.rows[999].length, 300);
        assert.equal(Number(served.headers['content-length']), served.body.length);
      }
      const growth = peakRssMiB(child.pid!)! - before;
      child.kill('SIGTERM');
      await exited;
      const { maxDelayMs } = JSON.parse(readFileSync(probe, 'utf8')) as { maxDelayMs: number };
      console.log(
        `      gex serve: peak RSS +${growth.toFixed(0)} MiB; event loop held at most ${maxDelayMs.toFixed(0)} ms; ` +
          `${latencies.length} requests of another client meanwhile, slowest ${Math.max(...latencies).toFixed(0)} ms`,
      );
      // the old whole-answer encoding: over 1 GiB more, and the loop held for seconds per preview (the
      // longest hold is a figure above: a wall-clock bound would measure the machine, not gex; the
      // other client's answers while the previews ran are what shows the loop was not held)
      assert.ok(growth < 300, `peak RSS grew by ${growth.toFixed(0)} MiB`);
      assert.ok(latencies.length >= 3, `another client got ${latencies.length} answers while the previews ran`);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
