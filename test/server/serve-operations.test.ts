import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startGex, type GexProcess } from '../support/gex-process.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { TEST_KEY } from '../support/store.js';

const CONFIGS = '/v2/storage/branch/default/components/ex-generic-v2/configs';

/** The value of one Prometheus sample (`name{labels} value`), 0 when the series does not exist yet. */
function sample(metrics: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of metrics.split('\n')) {
    const m = /^([a-z_:]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2].split(',');
    if (wanted.every((w) => have.includes(w))) return Number(m[3]);
  }
  return 0;
}

/** The address `gex serve` logs once it listens. */
async function addressOf(gex: GexProcess): Promise<string> {
  await gex.waitFor(/listening on http:\/\/[^\s/]+\/v2\/storage/);
  return /listening on (http:\/\/[^\s/]+)\/v2\/storage/.exec(gex.output())![1];
}

describe('gex serve: request log, /health and /metrics (real processes)', () => {
  let dir: string;
  let store: string;
  let token: string;
  let tokenId: number;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gex-serve-ops-'));
    store = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(store, TEST_KEY);
    const created = await backend.createToken({ description: 'ops' });
    token = created.token;
    tokenId = created.info.id;
    await backend.close();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const format of ['text', 'json'] as const) {
    it(`logs one ${format} line per request with route, status, duration and token id, never the token (it is sent in the header, the query and the path)`, async () => {
      const gex = startGex(['serve', '--port', '0', '--store', store], { ...TEST_KEY, GEX_LOG_FORMAT: format });
      try {
        const url = await addressOf(gex);
        const headers = { 'X-StorageApi-Token': token, 'content-type': 'application/json' };
        assert.equal(
          (
            await fetch(`${url}${CONFIGS}`, {
              method: 'POST',
              headers,
              body: JSON.stringify({ name: 'logged', configurationId: `cfg-${format}` }),
            })
          ).status,
          201,
        );
        // a client that puts secrets where they do not belong: query values, the path, percent-encoded
        const leaky = `${CONFIGS}/cfg-${format}?limit=5&token=${token}&${encodeURIComponent('#password')}=hunter2-secret&note=${encodeURIComponent(token)}`;
        assert.equal((await fetch(url + leaky, { headers })).status, 200);
        assert.equal((await fetch(`${url}/v2/storage/${encodeURIComponent(token)}`)).status, 404);
        assert.equal((await fetch(`${url}${CONFIGS}`, { headers: { 'X-StorageApi-Token': `${token}x` } })).status, 401);
        // a list option whose value is the token
        assert.equal((await fetch(`${url}${CONFIGS}?limit=${token}`, { headers })).status, 200);
        await gex.waitFor(/limit=\[hidden\]/);
      } finally {
        gex.child.kill('SIGTERM');
      }
      assert.equal((await gex.exited).code, 0);
      const output = gex.output();
      assert.ok(!output.includes(token), 'the token is in no line');
      assert.ok(!output.includes(token.slice(-40)), 'no part of the token that identifies it');
      assert.ok(!output.includes('hunter2-secret'), 'query values that could be secrets are hidden');

      const lines = output.split('\n').filter((l) => /\brequest\b/.test(l));
      const records = lines.map((line) => {
        if (format === 'json') return JSON.parse(line) as Record<string, unknown>;
        const fields: Record<string, unknown> = {};
        for (const m of line.matchAll(/ (\w+)=(\S+)/g)) fields[m[1]] = /^\d+(\.\d+)?$/.test(m[2]) ? Number(m[2]) : m[2];
        return fields;
      });
      assert.equal(records.length, 5, lines.join('\n'));
      const [created, detail, notFound, invalid, listed] = records;
      assert.deepEqual(
        {
          method: created.method,
          route: created.route,
          url: created.url,
          status: created.status,
          tokenId: created.tokenId,
        },
        {
          method: 'POST',
          route: '/v2/storage/branch/:branchId/components/:componentId/configs',
          url: CONFIGS,
          status: 201,
          tokenId,
        },
      );
      assert.equal(typeof created.durationMs, 'number');
      assert.equal(detail.route, '/v2/storage/branch/:branchId/components/:componentId/configs/:configId');
      assert.equal(detail.url, `${CONFIGS}/cfg-${format}?limit=5&token=[hidden]&%23password=[hidden]&note=[hidden]`);
      assert.deepEqual(
        [notFound.route, notFound.url, notFound.status, notFound.tokenId],
        ['unmatched', '[hidden]', 404, undefined],
      );
      assert.deepEqual([invalid.status, invalid.tokenId], [401, undefined], 'an invalid token has no id');
      assert.deepEqual([listed.status, listed.url, listed.tokenId], [200, `${CONFIGS}?limit=[hidden]`, tokenId]);
    });
  }

  it('answers /health and /metrics without a token; counts rise with requests; --metrics false turns /metrics off', async () => {
    const gex = startGex(['serve', '--port', '0', '--store', store, '--log-level', 'debug'], TEST_KEY);
    try {
      const url = await addressOf(gex);
      const health = await fetch(`${url}/health`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok' });

      const scrape = async () => {
        const response = await fetch(`${url}/metrics`);
        assert.equal(response.status, 200);
        assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
        return response.text();
      };
      const detail = {
        method: 'GET',
        route: '/v2/storage/branch/:branchId/components/:componentId/configs',
        status: '200',
      };
      const before = await scrape();
      for (let i = 0; i < 3; i++)
        assert.equal((await fetch(`${url}${CONFIGS}`, { headers: { 'X-StorageApi-Token': token } })).status, 200);
      // hostile paths do not make series of their own
      for (let i = 0; i < 3; i++) assert.equal((await fetch(`${url}/random-${i}-${Math.random()}`)).status, 404);
      const after = await scrape();
      assert.equal(
        sample(after, 'gex_http_requests_total', detail) - sample(before, 'gex_http_requests_total', detail),
        3,
      );
      assert.equal(
        sample(after, 'gex_http_request_duration_seconds_count', detail) -
          sample(before, 'gex_http_request_duration_seconds_count', detail),
        3,
      );
      assert.ok(sample(after, 'gex_http_request_duration_seconds_bucket', { ...detail, le: '+Inf' }) >= 3);
      assert.equal(sample(after, 'gex_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 3);
      assert.ok(!after.includes('random-'), 'no URL becomes a label');
      assert.equal(sample(after, 'gex_http_requests_total', { route: '/health', status: '200' }), 1);
      assert.match(after, /^process_cpu_user_seconds_total \d/m, 'default process metrics');
      assert.match(after, /^nodejs_eventloop_lag_seconds /m);
      assert.match(after, /^# TYPE gex_store_errors_total counter$/m);
      // probes are logged at debug
      await gex.waitFor(/DEBUG request .*route=\/health/);
    } finally {
      gex.child.kill('SIGTERM');
    }
    assert.equal((await gex.exited).code, 0);

    const off = startGex(['serve', '--port', '0', '--store', store, '--metrics', 'false'], TEST_KEY);
    try {
      const url = await addressOf(off);
      assert.equal((await fetch(`${url}/metrics`)).status, 404);
      assert.equal((await fetch(`${url}/health`)).status, 200);
    } finally {
      off.child.kill('SIGTERM');
    }
    assert.equal((await off.exited).code, 0);
  });
});
