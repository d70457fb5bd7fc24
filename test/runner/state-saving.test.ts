import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { fromPlain, stringifyExact } from '../../src/json/index.js';
import { Runner, type RunSummary } from '../../src/runner/runner.js';
import type { ConfigStore } from '../../src/store/config-store.js';
import { MAX_BODY_BYTES } from '../../src/store/embedded/session.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { openConfigStore, type OpenedStore } from '../support/open-store.js';
import { captureLogger } from '../support/extraction.js';
import { failStateUpdatesOf, stateOfSize } from '../support/states.js';
import { storeBackends, TEST_KEY } from '../support/store.js';

const C = 'ex-generic-v2';

/** The runner saves the states of a run all at once: every row's, or none. */
for (const factory of storeBackends()) {
  describe(`runner: states are saved all or nothing (${factory.name})`, () => {
    let server: FixtureServer;
    let dir: string;
    let backend: EmbeddedBackend;
    let dispose: () => Promise<void>;
    let opened: OpenedStore;
    let store: ConfigStore;
    let configId: string;
    let logs: () => string;

    before(async () => {
      server = await startFixtureServer({
        handler: (r) => (r.url.startsWith('/api/users') ? { body: [{ id: 1 }] } : undefined),
      });
    });
    after(() => server.close());

    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-state-saving-'));
      let location: string;
      ({ backend, location, dispose } = await factory.open());
      store = await backend.localSession();
      opened = await openConfigStore(location, { env: TEST_KEY });
      const c = await store.createConfiguration(C, {
        name: 'c',
        configuration: fromPlain({ parameters: { api: { baseUrl: `${server.url}/api/` } } }),
      });
      configId = c.id;
      const job = fromPlain({ parameters: { config: { jobs: [{ endpoint: 'users' }] } } });
      await store.createRow(C, configId, {
        rowId: 'r1',
        configuration: job,
        state: fromPlain({ component: { before: 1 } }),
      });
      await store.createRow(C, configId, {
        rowId: 'r2',
        configuration: job,
        state: fromPlain({ component: { before: 2 } }),
      });
    });
    afterEach(async () => {
      await opened.close();
      await dispose();
      await rm(dir, { recursive: true, force: true });
    });

    async function run(): Promise<{ summary: RunSummary; error?: Error }> {
      const capture = captureLogger('info');
      logs = capture.text;
      const runner = new Runner({
        target: { kind: 'stored', store: opened, componentId: C, configId, rowIds: [] },
        dataDir: path.join(dir, 'data'),
        logger: capture.logger,
        masker: capture.masker,
      });
      try {
        return { summary: await runner.run() };
      } catch (error) {
        return { summary: runner.result, error: error as Error };
      }
    }
    const storedStates = async () =>
      (await store.getConfiguration(C, configId)).rows.map((r) => stringifyExact(r.state));

    it("saves every row's state and says so per row", async () => {
      const { summary, error } = await run();
      assert.equal(error, undefined);
      assert.equal(summary.stateSaved, true);
      assert.deepEqual(
        summary.rows.map((r) => [r.id, r.stateSaved]),
        [
          ['r1', true],
          ['r2', true],
        ],
      );
      assert.equal(summary.stateRollback, undefined);
      const [r1, r2] = await storedStates();
      assert.match(r1, /^\{"component":\{"before":1,"time":\{"previousStart":\d+\}/);
      assert.match(r2, /^\{"component":\{"before":2,"time":\{"previousStart":\d+\}/);
      assert.match(logs(), /Saved the state of 2 rows: r1, r2/);
    });

    it("the second row's state grows over 4 MB in the run: no state is saved, and the summary says so", async () => {
      // stored just under the limit; the run adds time.previousStart and storage, which crosses it
      await store.updateRowState(C, configId, 'r2', stateOfSize(MAX_BODY_BYTES - 10));
      const before = await storedStates();
      const { summary, error } = await run();
      assert.match(error!.message, /state of row r2: the value is larger than 4 MB/);
      assert.equal(summary.status, 'error');
      assert.equal(summary.error!.kind, 'user');
      assert.equal(summary.stateSaved, false);
      assert.deepEqual(
        summary.rows.map((r) => [r.id, r.status, r.stateSaved]),
        [
          ['r1', 'success', false],
          ['r2', 'success', false],
        ],
      );
      assert.equal(summary.stateRollback, undefined, 'nothing was written, so nothing is rolled back');
      assert.deepEqual(await storedStates(), before);
      assert.match(logs(), /No state is saved: .*r2/);
    });

    it('the database fails in the middle of saving (after the first row): no state is saved', async () => {
      await failStateUpdatesOf(backend, 'r2');
      const before = await storedStates();
      const { summary, error } = await run();
      assert.match(error!.message, /injected failure/);
      assert.equal(summary.stateSaved, false);
      assert.deepEqual(
        summary.rows.map((r) => r.stateSaved),
        [false, false],
      );
      assert.deepEqual(await storedStates(), before);
    });
  });
}
