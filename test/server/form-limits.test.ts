import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { formParsesInThread } from '../../src/server/http/form-parser.js';
import { FORM_LIMITS } from '../../src/server/http/form-text.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { startServe } from '../support/cli.js';
import { sqliteBackend, TEST_KEY } from '../support/store.js';
import { BRANCH, COMPONENT, configsPath, TestServer, type ApiResponse } from '../support/storage-api-server.js';

const CONFIGS = `${BRANCH}/components/${COMPONENT}/configs`;

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

/** GETs one after another until `until` settles; their latencies. */
async function readWhile(server: TestServer, path: string, token: string, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const { value, ms } = await timed(() => server.get(path, { token }));
    assert.equal(value.status, 200);
    latencies.push(ms);
  }
  return latencies;
}

function assertFormRefused(res: ApiResponse, pattern: RegExp): void {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.code, 'validation.invalidForm');
  assert.equal(res.body.status, 'error');
  assert.match(res.body.exceptionId, /^exception-[0-9a-f]{32}$/);
  assert.match(res.body.error, pattern);
}

describe("form bodies: the parser's work is bounded", function () {
  this.timeout(60_000);
  let server: TestServer;
  let reader: string;
  let configId: string;
  before(async () => {
    server = await TestServer.start();
    reader = await server.createToken({ readOnly: true, description: 'reader' });
    configId = (await server.createConfig({ name: 'Existing' })).id;
    // start the parser thread, so that the timings below measure parsing, not a thread's start
    await server.post(CONFIGS, { token: reader, form: `name=warm-up&${'x=1&'.repeat(500)}` });
  });
  after(async () => server?.close());

  it('refuses 40,000 list entries from a read-only token with 400, answering other requests meanwhile', async () => {
    const attack = timed(() => server.post(CONFIGS, { token: reader, form: Array(40_000).fill('a[]=1').join('&') }));
    const latencies = await readWhile(server, configsPath(configId), reader, attack);
    const { value: res, ms } = await attack;
    assertFormRefused(res, /more than 1000 fields/);
    console.log(`      refused in ${ms.toFixed(0)} ms; ${latencies.length} GETs answered meanwhile`);
    assert.ok(latencies.length >= 1, 'a concurrent GET was answered meanwhile');
  });

  it('refuses deep nesting and huge list indexes with 400', async () => {
    assertFormRefused(
      await server.post(CONFIGS, { token: reader, form: `name=x&a${'[b]'.repeat(5000)}=1` }),
      /nested more than 5 brackets/,
    );
    assertFormRefused(
      await server.post(CONFIGS, { form: 'name=x&rowsSortOrder[100000000]=1' }),
      /more than 1000 elements or an index above 1000/,
    );
    assertFormRefused(
      await server.post(CONFIGS, { form: `name=x&rowsSortOrder[${FORM_LIMITS.arrayLength + 1}]=r` }),
      /index above 1000/,
    );
  });

  it('accepts a form of exactly 1,000 fields, nothing dropped', async () => {
    const fields = [
      'name=Thousand',
      ...Array.from({ length: 997 }, (_, i) => `ignored${i}=1`),
      `description=${'d'.repeat(10)}`,
    ];
    assert.equal(fields.length, FORM_LIMITS.parameters - 1);
    fields.push('isDisabled=1');
    const res = await server.post(CONFIGS, { form: fields.join('&') });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.name, 'Thousand');
    assert.equal(res.body.description, 'dddddddddd', 'the last-but-one field arrived');
    assert.equal(res.body.isDisabled, true, 'the 1,000th field arrived');
    assertFormRefused(await server.post(CONFIGS, { form: `${fields.join('&')}&one=more` }), /more than 1000 fields/);
  });

  it('accepts metadata lists built with bracket keys, as the Go and old PHP clients send them', async () => {
    const form = Array.from({ length: 300 }, (_, i) => `metadata[${i}][key]=k${i}&metadata[${i}][value]=v${i}`).join(
      '&',
    );
    const res = await server.post(`${configsPath(configId)}/metadata`, { form });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.length, 300);
  });

  it('keeps answering other requests while the largest allowed form is parsed', async () => {
    // 1,000 fields, 5 levels deep, ~15 MB of percent-encoded values: the most parsing a body may cost
    const value = '%41'.repeat(5000);
    const fields = Array.from(
      { length: FORM_LIMITS.parameters - 1 },
      (_, i) => `k${FORM_LIMITS.parameters - i}[a][b][c][d][e]=${value}`,
    );
    const form = ['name=x', ...fields].join('&');
    // warm the worker and the route
    await server.post(CONFIGS, { token: reader, form: form.slice(0, 100_000) });
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const write = timed(() => server.post(CONFIGS, { token: reader, form }));
    let settled = false;
    void write.finally(() => (settled = true));
    // the body reaches the parser thread; from then on, a GET answered before the parse ends proves
    // the event loop was free while it ran (on the loop, nothing else could be answered meanwhile)
    while (formParsesInThread() === 0 && !settled) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'the form was handed to the parser thread');
    let answeredDuringParse = 0;
    const latencies: number[] = [];
    while (formParsesInThread() > 0) {
      const { value: got, ms: latency } = await timed(() => server.get(configsPath(configId), { token: reader }));
      assert.equal(got.status, 200);
      latencies.push(latency);
      if (formParsesInThread() > 0) answeredDuringParse++;
    }
    const { value: res, ms } = await write;
    loop.disable();
    assert.equal(
      res.status,
      403,
      `the form was parsed, then refused for the read-only token: ${res.text.slice(0, 200)}`,
    );
    const sorted = [...latencies].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
    // figures only: on a loaded machine any wall-clock bound would measure the machine, not gex
    console.log(
      `      ${(form.length / 1e6).toFixed(1)} MB form handled in ${ms.toFixed(0)} ms; during the parse ${answeredDuringParse} GETs, median ${median.toFixed(1)} ms; longest event-loop delay ${(loop.max / 1e6).toFixed(1)} ms`,
    );
    assert.ok(answeredDuringParse >= 1, 'GETs were answered while the parser thread held the form');
  });
});

describe('form bodies in the gex binary (the bundled parser thread)', function () {
  this.timeout(30_000);

  it('parses a large form in its worker thread and refuses one over the limit', async () => {
    const store = await sqliteBackend.fresh();
    const backend = await openEmbeddedStore(store.location, TEST_KEY);
    const { token } = await backend.createToken({ description: 'bundle form test' });
    await backend.close();
    const { child, url } = await startServe(['--store', store.location], TEST_KEY);
    try {
      const post = (form: string) =>
        fetch(`${url}${CONFIGS}`, {
          method: 'POST',
          headers: { 'X-StorageApi-Token': token, 'content-type': 'application/x-www-form-urlencoded' },
          body: form,
        });
      const large = `name=Bundled&configuration=${encodeURIComponent(JSON.stringify({ parameters: { text: 'é'.repeat(2000) } }))}`;
      const created = await post(large);
      assert.equal(created.status, 201, await created.clone().text());
      assert.equal(
        ((await created.json()) as { configuration: { parameters: { text: string } } }).configuration.parameters.text,
        'é'.repeat(2000),
      );
      const refused = await post(Array(40_000).fill('a[]=1').join('&'));
      assert.equal(refused.status, 400);
      assert.equal(((await refused.json()) as { code: string }).code, 'validation.invalidForm');
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      await store.dispose();
    }
  });
});
