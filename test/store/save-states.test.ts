import assert from 'node:assert/strict';
import pg from 'pg';
import { fromPlain, stringifyExact, type JsonValue } from '../../src/json/index.js';
import type { ConfigStore } from '../../src/store/config-store.js';
import { MAX_BODY_BYTES } from '../../src/store/embedded/session.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { StoreError } from '../../src/store/store-error.js';
import { failStateUpdatesOf, stateOfSize } from '../support/states.js';
import { storeBackends } from '../support/store.js';

const C = 'ex-generic-v2';
const json = (v: JsonValue) => stringifyExact(v);

for (const factory of storeBackends()) {
  describe(`saving several states at once (${factory.name})`, () => {
    let backend: EmbeddedBackend;
    let location: string;
    let dispose: () => Promise<void>;
    let store: ConfigStore;
    let configId: string;

    beforeEach(async () => {
      ({ backend, location, dispose } = await factory.open());
      store = await backend.localSession();
      configId = (await store.createConfiguration(C, { name: 'c', state: fromPlain({ root: 0 }) })).id;
      for (const rowId of ['r1', 'r2', 'r3'])
        await store.createRow(C, configId, { rowId, state: fromPlain({ before: rowId }) });
    });
    afterEach(() => dispose());

    const states = async () => {
      const c = await store.getConfiguration(C, configId);
      return {
        root: json(c.state),
        rows: Object.fromEntries(c.rows.map((r) => [r.id, json(r.state)])),
        version: c.version,
      };
    };
    const untouched = {
      root: '{"root":0}',
      rows: { r1: '{"before":"r1"}', r2: '{"before":"r2"}', r3: '{"before":"r3"}' },
    };

    it("saves the configuration state and several rows' states together, without a new version", async () => {
      const before = await states();
      await store.saveStates(C, configId, [
        { rowId: 'r1', state: fromPlain({ after: 1 }) },
        { rowId: 'r3', state: fromPlain({ after: 3, '#secret': 'plain' }) },
        { rowId: null, state: fromPlain({ root: 1 }) },
      ]);
      const after = await states();
      assert.equal(after.root, '{"root":1}');
      assert.equal(after.rows.r1, '{"after":1}');
      assert.equal(after.rows.r2, '{"before":"r2"}');
      assert.match(
        after.rows.r3,
        /^\{"after":3,"#secret":"KBC::ProjectSecure::/,
        'secrets are encrypted as in every write',
      );
      assert.equal(after.version, before.version);
    });

    it('a state over 4 MB in the second row: nothing is saved, and the error names the row', async () => {
      await assert.rejects(
        store.saveStates(C, configId, [
          { rowId: 'r1', state: fromPlain({ after: 1 }) },
          { rowId: 'r2', state: stateOfSize(MAX_BODY_BYTES + 1) },
        ]),
        (e: unknown) => {
          assert.ok(e instanceof StoreError);
          assert.equal(e.status, 400);
          assert.match(e.message, /state of row r2: the value is larger than 4 MB/);
          return true;
        },
      );
      const after = await states();
      assert.deepEqual({ root: after.root, rows: after.rows }, untouched);
      await store.saveStates(C, configId, [{ rowId: 'r2', state: stateOfSize(MAX_BODY_BYTES) }]);
      assert.equal((await states()).rows.r2.length, MAX_BODY_BYTES, 'exactly 4 MB is accepted');
    });

    it('a failure of the database in the middle of the transaction (after the first row was written) saves nothing', async () => {
      await failStateUpdatesOf(backend, 'r2');
      await assert.rejects(
        store.saveStates(C, configId, [
          { rowId: null, state: fromPlain({ root: 1 }) },
          { rowId: 'r1', state: fromPlain({ after: 1 }) },
          { rowId: 'r2', state: fromPlain({ after: 2 }) },
          { rowId: 'r3', state: fromPlain({ after: 3 }) },
        ]),
        /injected failure/,
      );
      const after = await states();
      assert.deepEqual({ root: after.root, rows: after.rows }, untouched);
    });

    it('an unknown or deleted row: nothing is saved', async () => {
      await store.deleteRow(C, configId, 'r3');
      for (const missing of ['nope', 'r3']) {
        await assert.rejects(
          store.saveStates(C, configId, [
            { rowId: 'r1', state: fromPlain({ after: 1 }) },
            { rowId: missing, state: fromPlain({}) },
          ]),
          (e: unknown) => e instanceof StoreError && e.status === 404,
        );
      }
      assert.equal((await states()).rows.r1, '{"before":"r1"}');
    });

    it('refuses a row given twice, and a read-only token', async () => {
      await assert.rejects(
        store.saveStates(C, configId, [
          { rowId: 'r1', state: fromPlain({ a: 1 }) },
          { rowId: 'r1', state: fromPlain({ a: 2 }) },
        ]),
        /may be given once/,
      );
      const viewer = await backend.createToken({ description: 'viewer', readOnly: true });
      const readOnly = backend.session((await backend.authenticate(viewer.token))!);
      await assert.rejects(
        readOnly.saveStates(C, configId, [{ rowId: 'r1', state: fromPlain({ a: 1 }) }]),
        (e: unknown) => e instanceof StoreError && e.status === 403,
      );
      assert.equal((await states()).rows.r1, '{"before":"r1"}');
    });

    if (factory.name === 'PostgreSQL') {
      it('waits for the configuration lock that other writers hold, and writes nothing before it is released', async () => {
        const holder = new pg.Client({ connectionString: location });
        await holder.connect();
        try {
          await holder.query('BEGIN');
          await holder.query(`SELECT id FROM configurations WHERE id = $1 FOR UPDATE`, [configId]);
          let settled = false;
          const saving = store
            .saveStates(C, configId, [{ rowId: 'r1', state: fromPlain({ after: 1 }) }])
            .finally(() => (settled = true));
          // the save's connection queues on the lock (seen by the database itself, no sleeping)
          for (;;) {
            assert.ok(!settled, 'saved without waiting for the configuration lock');
            const waiting = await holder.query(
              'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))',
            );
            if (waiting.rows[0].n > 0) break;
            await new Promise((resolve) => setImmediate(resolve));
          }
          const seen = await holder.query(`SELECT state FROM configuration_rows WHERE id = 'r1'`);
          assert.equal(seen.rows[0].state, '{"before":"r1"}');
          await holder.query('COMMIT');
          await saving;
          assert.equal((await states()).rows.r1, '{"after":1}');
        } finally {
          await holder.end();
        }
      });
    }
  });
}
