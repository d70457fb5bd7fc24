import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../../support/fixture-server/fixture-server.js';
import { fromPlain, stringifyExact } from '../../../src/json/index.js';
import { MAX_BODY_BYTES } from '../../../src/store/embedded/session.js';
import { openEmbeddedStore } from '../../support/open-store.js';
import { runGex, startServe } from '../../support/cli.js';
import { stateOfSize } from '../../support/states.js';
import { creatableRowId, plantRowIds } from '../../support/planted-rows.js';

const KEY = { GEX_MASTER_KEY: '77'.repeat(32) };
const C = 'ex-generic-v2';

interface Summary {
  status: string;
  stateSaved: boolean;
  stateRollback?: {
    status: string;
    failedRowId: string | null;
    restoredRowIds: Array<string | null>;
    notRestored: Array<{ rowId: string | null; reason: string }>;
  };
  rows: Array<{ id: string; status: string; stateSaved: boolean }>;
}

/**
 * A forwarder to the real server that answers one chosen state save itself with a 403 — a
 * Storage API that refuses the restore of a state.
 */
async function refusingProxy(
  target: string,
  refuseStateSave: number,
): Promise<{ url: string; close(): Promise<void> }> {
  let stateSaves = 0;
  const server = http.createServer((req, res) => {
    if (req.method === 'PUT' && req.url?.endsWith('/state') && ++stateSaves === refuseStateSave) {
      req.resume();
      res.writeHead(403, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'Refused by the test proxy', code: 'accessDenied', status: 'error' }));
      return;
    }
    const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The runner against a real `gex serve` (the Storage API saves one state per call): the second
 * row's save fails, and the first row's state must be put back to what it was.
 */
describe('gex run against gex serve: a failed state save puts back the states saved before it', function () {
  this.timeout(60_000);
  let api: FixtureServer;
  let dir: string;
  let storeFile: string;
  let served: { child: ChildProcess; url: string };
  let token: string;

  before(async () => {
    api = await startFixtureServer({
      handler: (r) => (r.url.startsWith('/api/users') ? { body: [{ id: 1 }] } : undefined),
    });
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-remote-rollback-'));
    storeFile = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(storeFile, KEY);
    token = (await backend.createToken({ description: 'runner', runner: true })).token;
    await backend.close();
    served = await startServe(['--store', storeFile], KEY);
  });
  after(async () => {
    served.child.kill('SIGTERM');
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A configuration whose row r2's state crosses 4 MB in the run (the server refuses to save it). */
  async function configurationWithOversizedSecondRow(
    rowIds = ['r1', 'r2'],
  ): Promise<{ id: string; states: () => Promise<Record<string, string>> }> {
    const backend = await openEmbeddedStore(storeFile, KEY);
    let id: string;
    try {
      const store = await backend.localSession();
      const c = await store.createConfiguration(C, {
        name: 'rollback',
        configuration: fromPlain({ parameters: { api: { baseUrl: `${api.url}/api/` } } }),
        state: fromPlain({ root: 'kept' }),
      });
      id = c.id;
      const job = fromPlain({ parameters: { config: { jobs: [{ endpoint: 'users' }] } } });
      await store.createRow(C, id, {
        rowId: creatableRowId(rowIds[0], 0),
        configuration: job,
        state: fromPlain({ component: { before: 1, '#secret': 's3' }, other: 'kept' }),
      });
      await store.createRow(C, id, {
        rowId: creatableRowId(rowIds[1], 1),
        configuration: job,
        state: stateOfSize(MAX_BODY_BYTES - 10),
      });
    } finally {
      await backend.close();
    }
    plantRowIds(storeFile, id, rowIds);
    return {
      id,
      async states() {
        const b = await openEmbeddedStore(storeFile, KEY);
        try {
          const c = await (await b.localSession()).getConfiguration(C, id);
          return Object.fromEntries([
            ['(configuration)', stringifyExact(c.state)],
            ...c.rows.map((r) => [r.id, stringifyExact(r.state)]),
          ]);
        } finally {
          await b.close();
        }
      },
    };
  }

  const run = (configId: string, storeUrl: string, name: string) =>
    runGex(
      [
        'run',
        '--config-id',
        configId,
        '--store',
        storeUrl,
        '--token',
        token,
        '--data-dir',
        path.join(dir, name),
        '--summary',
        path.join(dir, `${name}.json`),
      ],
      // a runner against a server holds only the token (a master key there is refused)
      { GEX_MASTER_KEY: '' },
    );
  const summaryOf = async (name: string) =>
    JSON.parse(await readFile(path.join(dir, `${name}.json`), 'utf8')) as Summary;

  it('the second save is refused: the first row gets its previous state back and the summary says so', async () => {
    const config = await configurationWithOversizedSecondRow();
    const before = await config.states();
    const result = await run(config.id, served.url, 'complete');
    assert.equal(result.code, 1, result.stderr + result.stdout);
    assert.match(
      result.stderr,
      /No state is saved: Saving the state of row r2 failed: .*larger than 4 MB.*put back \(row r1\)/,
    );
    const summary = await summaryOf('complete');
    assert.equal(summary.status, 'error');
    assert.equal(summary.stateSaved, false);
    assert.deepEqual(summary.stateRollback, {
      status: 'complete',
      failedRowId: 'r2',
      restoredRowIds: ['r1'],
      notRestored: [],
    });
    assert.deepEqual(
      summary.rows.map((r) => [r.id, r.status, r.stateSaved]),
      [
        ['r1', 'success', false],
        ['r2', 'success', false],
      ],
    );
    assert.deepEqual(await config.states(), before, 'every state is as it was, the encrypted secret included');
  });

  it('the restore is refused too: the summary names the row that keeps the new state', async () => {
    const config = await configurationWithOversizedSecondRow();
    // state saves through the proxy: 1 = r1 (saved), 2 = r2 (refused by the server), 3 = r1's restore (refused here)
    const proxy = await refusingProxy(served.url, 3);
    try {
      const result = await run(config.id, proxy.url, 'incomplete');
      assert.equal(result.code, 1, result.stderr + result.stdout);
      assert.match(
        result.stderr,
        /State saved only in part: .*could not be put back and may hold the new state: row r1 \(Refused by the test proxy\)/,
      );
      const summary = await summaryOf('incomplete');
      assert.equal(summary.stateSaved, false);
      assert.deepEqual(summary.stateRollback, {
        status: 'incomplete',
        failedRowId: 'r2',
        restoredRowIds: [],
        notRestored: [{ rowId: 'r1', reason: 'Refused by the test proxy' }],
      });
      assert.deepEqual(
        summary.rows.map((r) => [r.id, r.stateSaved]),
        [
          ['r1', true],
          ['r2', false],
        ],
      );
      assert.match(
        (await config.states()).r1,
        /"time":\{"previousStart":\d+\}/,
        'r1 does hold the new state, as reported',
      );
    } finally {
      await proxy.close();
    }
  });

  it('a row "..": its state is never sent to the configuration\'s address', async () => {
    const config = await configurationWithOversizedSecondRow(['..', 'r2']);
    const before = await config.states();
    const result = await run(config.id, served.url, 'dotdot');
    assert.equal(result.code, 1, result.stderr + result.stdout);
    assert.match(result.stderr, /The id "\.\." cannot be addressed in a Storage API URL/);
    assert.deepEqual(await config.states(), before, 'the configuration state is untouched');
    assert.equal((await summaryOf('dotdot')).stateSaved, false);
  });
});
