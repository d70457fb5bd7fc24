import assert from 'node:assert/strict';
import {
  createConfiguration,
  fireConcurrentUpdates,
  listVersions,
  startServeCluster,
  type ServeCluster,
} from '../support/serve-cluster.js';
import { storeBackends, TEST_KEY, type FreshStore } from '../support/store.js';

/**
 * Issue 6's "done when": several `gex serve` processes on one database take `UPDATES` concurrent
 * updates of one configuration — as many new versions, numbered consecutively, each update in the
 * history, no error to any client. PostgreSQL runs three processes; SQLite one (the baseline).
 * npm test fires 60 (multi-process.test.ts), npm run test:stress the issue's 300.
 */
export function describeConcurrentUpdates(updates: number): void {
  const UPDATES = updates;
  for (const backend of storeBackends()) {
    const processes = backend.name === 'PostgreSQL' ? 3 : 1;
    describe(`gex serve ×${processes} on one ${backend.name} store: ${UPDATES} concurrent updates`, function () {
      this.timeout(120_000);
      let store: FreshStore;
      let cluster: ServeCluster;

      before(async () => {
        store = await backend.fresh();
        cluster = await startServeCluster(store.location, processes, TEST_KEY);
      });
      after(async () => {
        await cluster?.stop();
        await store?.dispose();
      });

      it('gives distinct consecutive versions, loses no update and fails no client', async () => {
        // warm the processes (JIT, pools) on another configuration, so the rate measures the store
        const warmUp = await fireConcurrentUpdates(cluster, await createConfiguration(cluster, 'Warm-up'), 30);
        assert.deepEqual(
          warmUp.results.filter((r) => r.status !== 200),
          [],
        );
        const id = await createConfiguration(cluster, 'Contended');
        const load = await fireConcurrentUpdates(cluster, id, UPDATES);
        console.log(
          `      ${backend.name}, ${processes} process(es): ${UPDATES} concurrent updates in ${Math.round(load.wallMs)} ms = ${load.updatesPerSecond} updates/s`,
        );

        const failures = load.results.filter((r) => r.status !== 200);
        assert.deepEqual(failures, [], 'every client got 200');
        const numbers = load.results.map((r) => r.version!).sort((a, b) => a - b);
        assert.deepEqual(
          numbers,
          Array.from({ length: UPDATES }, (_, i) => i + 2),
          `versions 2..${UPDATES + 1}, each once`,
        );

        // every server sees the same history: each update under the version its client was told
        for (let server = 0; server < processes; server++) {
          const versions = await listVersions(cluster, id, server);
          assert.deepEqual(
            versions.map((v) => v.version),
            Array.from({ length: UPDATES + 1 }, (_, i) => UPDATES + 1 - i),
          );
          const byDescription = new Map(versions.map((v) => [v.changeDescription, v]));
          for (const [i, r] of load.results.entries()) {
            const v = byDescription.get(r.changeDescription);
            assert.ok(v, `${r.changeDescription} is in the version list of server ${server}`);
            assert.equal(v.version, r.version);
            assert.deepEqual(v.configuration, { n: i });
          }
        }
        assert.equal(
          new Set(load.results.map((r) => r.server)).size,
          processes,
          'the load was spread over every process',
        );
      });
    });
  }
}
