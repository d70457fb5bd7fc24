import assert from 'node:assert/strict';
import { UserError } from '../../src/common/errors.js';
import { fromPlain } from '../../src/json/index.js';
import type { ConfigStore } from '../../src/store/config-store.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { importConfiguration } from '../../src/store/import-configuration.js';
import { storeBackends } from '../support/store.js';

const C = 'ex-generic-v2';
const HALF_MADE = fromPlain({
  name: 'half',
  configurationId: 'half',
  rows: [{ rowId: 'a' }, { rowId: 'b' }, { rowId: 'a' }],
});

/**
 * The store as a Storage API client sees it: the same calls, but no transaction (so the import
 * must undo its own work), and a delete that can be made to fail.
 */
function withoutTransactions(store: ConfigStore, failDeletes: () => boolean): ConfigStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'inTransaction' || key === 'importConfiguration') return undefined;
      if (key === 'deleteConfiguration' && failDeletes())
        return () => Promise.reject(new Error('connection reset while deleting'));
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

for (const factory of storeBackends()) {
  describe(`importConfiguration all or nothing (${factory.name})`, () => {
    let backend: EmbeddedBackend;
    let dispose: () => Promise<void>;
    let store: ConfigStore;

    beforeEach(async () => {
      ({ backend, dispose } = await factory.open());
      store = await backend.localSession();
    });
    afterEach(() => dispose());

    const leftBehind = async () =>
      [...(await store.listConfigurations(C)), ...(await store.listConfigurations(C, { isDeleted: true }))].map(
        (c) => c.id,
      );

    it('rolls the transaction back on the embedded store: no configuration, no row, no version left', async () => {
      await assert.rejects(
        importConfiguration(store, C, HALF_MADE),
        (e: Error) =>
          e instanceof UserError && /Import failed at rows\[2\] \(id a\).*one transaction, rolled back/.test(e.message),
      );
      assert.deepEqual(await leftBehind(), []);
      await assert.rejects(store.listConfigurationVersions(C, 'half'), /not found/);
    });

    it('without transactions (a Storage API) deletes and purges what it created when a later step fails', async () => {
      const remote = withoutTransactions(store, () => false);
      await assert.rejects(importConfiguration(remote, C, HALF_MADE), (e: Error) =>
        /Import failed at rows\[2\] \(id a\): .*The configuration half created so far was removed again \(deleted and purged\)/.test(
          e.message,
        ),
      );
      assert.deepEqual(await leftBehind(), []);
    });

    it('says clearly when that cleanup fails, naming the configuration left behind and how to remove it', async () => {
      const remote = withoutTransactions(store, () => true);
      await assert.rejects(importConfiguration(remote, C, HALF_MADE), (e: Error) => {
        assert.ok(e instanceof UserError);
        assert.match(
          e.message,
          /Import failed at rows\[2\] \(id a\): .*The configuration half created so far could NOT be removed \(connection reset while deleting\): remove it with "gex configs delete half" and "gex configs purge half --yes"/,
        );
        return true;
      });
      assert.deepEqual(await leftBehind(), ['half'], 'the half-made configuration is what the message says');
    });

    it('checks the document before creating anything', async () => {
      await assert.rejects(
        importConfiguration(store, C, fromPlain({ name: 'x', rows: [{}, 'not a row'] })),
        /rows\[1\] of the configuration document must be an object/,
      );
      await assert.rejects(
        importConfiguration(store, C, fromPlain({ name: 'x', rows: {} })),
        /"rows" of a configuration document must be a list/,
      );
      assert.deepEqual(await leftBehind(), []);
    });

    it("joins the failed step's message and the outcome as sentences: never a doubled period", async () => {
      const taken = fromPlain({ name: 'taken', configurationId: 'taken' });
      await importConfiguration(store, C, taken);
      for (const remote of [false, true]) {
        const target = remote ? withoutTransactions(store, () => false) : store;
        await assert.rejects(importConfiguration(target, C, taken), (e: Error) => {
          assert.match(
            e.message,
            /^Import failed at creating the configuration: Configuration taken already exists\. Nothing was imported/,
          );
          assert.ok(!e.message.includes('..'), e.message);
          return true;
        });
      }
    });
  });
}
