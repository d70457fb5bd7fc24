import assert from 'node:assert/strict';
import { fromPlain, toPlain } from '../../src/json/index.js';
import type { ConfigStore } from '../../src/store/config-store.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import type { ReplaceConfigurationInput } from '../../src/store/types.js';
import { storeBackends } from '../support/store.js';

const C = 'ex-generic-v2';

function input(
  name: string,
  rows: Array<{ rowId?: string; name?: string; configuration?: unknown; state?: unknown }>,
  rowsSortOrder: string[] = [],
  extra: Record<string, unknown> = {},
): ReplaceConfigurationInput {
  return {
    configuration: { name, configuration: fromPlain({ parameters: { v: name } }), ...extra },
    rows: rows.map((r) => ({
      ...r,
      configuration: r.configuration === undefined ? undefined : fromPlain(r.configuration),
      state: r.state === undefined ? undefined : fromPlain(r.state),
    })),
    rowsSortOrder,
  };
}

/** The embedded store's replace: a configuration becomes another as ONE version, all or nothing. */
for (const factory of storeBackends()) {
  describe(`replaceConfiguration (${factory.name})`, () => {
    let backend: EmbeddedBackend;
    let dispose: () => Promise<void>;
    let store: ConfigStore;

    beforeEach(async () => {
      ({ backend, dispose } = await factory.open());
      store = await backend.localSession();
      await store.createConfiguration(C, {
        name: 'one',
        configurationId: 'cfg',
        configuration: fromPlain({ parameters: { v: 'one' } }),
      });
      await store.createRow(C, 'cfg', {
        rowId: 'keep',
        name: 'keep',
        configuration: fromPlain({ parameters: { '#secret': 'plain-secret' } }),
        state: fromPlain({ component: { k: 1 } }),
      });
      await store.createRow(C, 'cfg', { rowId: 'change', name: 'change' });
      await store.createRow(C, 'cfg', { rowId: 'drop', name: 'drop' });
    });
    afterEach(() => dispose());

    it('makes one configuration version: rows kept, changed, added and deleted, with the new order', async () => {
      const before = await store.getConfiguration(C, 'cfg');
      const byId = new Map(before.rows.map((r) => [r.id, r]));
      const after = await store.replaceConfiguration!(
        C,
        'cfg',
        input(
          'two',
          [
            // the secret re-sent in plain text is recognised as unchanged
            { rowId: 'keep', name: 'keep', configuration: { parameters: { '#secret': 'plain-secret' } } },
            { rowId: 'change', name: 'changed', state: { component: { c: 2 } } },
            { rowId: 'new', name: 'new' },
          ],
          ['new', 'change', 'keep'],
        ),
      );
      assert.equal(after.version, before.version + 1);
      assert.equal(after.name, 'two');
      assert.deepEqual(after.rowsSortOrder, ['new', 'change', 'keep']);
      assert.deepEqual(
        after.rows.map((r) => [r.id, r.name]),
        [
          ['new', 'new'],
          ['change', 'changed'],
          ['keep', 'keep'],
        ],
      );
      const rows = new Map(after.rows.map((r) => [r.id, r]));
      assert.equal(rows.get('keep')!.version, byId.get('keep')!.version, 'an unchanged row gets no row version');
      assert.deepEqual(toPlain(rows.get('keep')!.state), { component: { k: 1 } }, 'a state not given is kept');
      assert.equal(rows.get('change')!.version, byId.get('change')!.version + 1);
      assert.deepEqual(toPlain(rows.get('change')!.state), { component: { c: 2 } });
      assert.equal(rows.get('new')!.version, 1);

      const version = await store.getConfigurationVersion(C, 'cfg', after.version);
      assert.deepEqual(
        version.rows.map((r) => r.id),
        ['new', 'change', 'keep'],
      );
      assert.equal(version.changeDescription, 'Replaced by an import');
      assert.equal((await store.listConfigurationVersions(C, 'cfg')).length, before.version + 1);
      // the deleted row can come back: its version counter continues
      const back = await store.replaceConfiguration!(C, 'cfg', input('two', [{ rowId: 'drop', name: 'back' }]));
      assert.deepEqual(
        back.rows.map((r) => r.id),
        ['drop'],
      );
      assert.equal(back.rows[0].version, byId.get('drop')!.version + 1);
    });

    it('makes no version when the replacement is what is stored', async () => {
      const before = await store.getConfiguration(C, 'cfg');
      const same = {
        configuration: { name: before.name, configuration: before.configuration },
        rows: before.rows.map((r) => ({ rowId: r.id, name: r.name, configuration: r.configuration })),
        rowsSortOrder: [],
      };
      const after = await store.replaceConfiguration!(C, 'cfg', same);
      assert.equal(after.version, before.version);
      assert.equal((await store.listConfigurationVersions(C, 'cfg')).length, before.version);
    });

    it('changes nothing when any part is refused: an order naming an unknown row, a row id given twice, an id that is not addressable', async () => {
      const before = await store.getConfiguration(C, 'cfg');
      await assert.rejects(
        store.replaceConfiguration!(C, 'cfg', input('two', [{ rowId: 'keep' }], ['keep', 'ghost'])),
        /rowsSortOrder: rows "ghost" do not exist/,
      );
      await assert.rejects(
        store.replaceConfiguration!(C, 'cfg', input('two', [{ rowId: 'keep' }, { rowId: 'keep' }])),
        /the row id "keep" is given twice/,
      );
      await assert.rejects(store.replaceConfiguration!(C, 'cfg', input('two', [{ rowId: '..' }])), /rowId/);
      await assert.rejects(store.replaceConfiguration!(C, 'nope', input('two', [])), /Configuration nope not found/);
      assert.deepEqual(await store.getConfiguration(C, 'cfg'), before);
    });
  });
}
