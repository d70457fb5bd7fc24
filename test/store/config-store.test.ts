import assert from 'node:assert/strict';
import type { ConfigStore } from '../../src/store/config-store.js';
import { CIPHER_PREFIX } from '../../src/store/encryption.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { StoreError } from '../../src/store/store-error.js';
import { fromPlain, stringifyExact, toPlain, type JsonValue } from '../../src/json/index.js';
import { storeBackends } from '../support/store.js';

const C = 'ex-generic-v2';
const json = (v: JsonValue) => stringifyExact(v);
const plain = (v: unknown) => fromPlain(v);

async function rejectsWith(promise: Promise<unknown>, status: number, code: string, message?: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof StoreError, `expected a StoreError, got ${String(e)}`);
    assert.equal(e.status, status);
    assert.equal(e.code, code);
    if (message) assert.match(e.message, message);
    return true;
  });
}

for (const factory of storeBackends()) {
  describe(`config store domain rules (${factory.name})`, () => {
    let backend: EmbeddedBackend;
    let dispose: () => Promise<void>;
    let store: ConfigStore;

    beforeEach(async () => {
      ({ backend, dispose } = await factory.open());
      store = await backend.localSession();
    });
    afterEach(() => dispose());

    describe('create and read', () => {
      it('creates version 1 with Keboola defaults', async () => {
        const c = await store.createConfiguration(C, { name: 'Main', configurationId: 'main-1' });
        assert.equal(c.id, 'main-1');
        assert.equal(c.version, 1);
        assert.equal(c.description, '');
        assert.equal(c.changeDescription, 'Configuration created');
        assert.equal(json(c.configuration), '{}');
        assert.equal(json(c.state), '{}');
        assert.deepEqual(c.rowsSortOrder, []);
        assert.deepEqual(c.rows, []);
        assert.equal(c.isDisabled, false);
        assert.match(c.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}$/);
        assert.equal(c.currentVersion.versionIdentifier.length, 26);
        assert.equal(typeof c.creatorToken.id, 'number');
      });

      it('generates numeric string ids and requires a name', async () => {
        const c = await store.createConfiguration(C, { name: 'x' });
        assert.match(c.id, /^\d+$/);
        await rejectsWith(
          store.createConfiguration(C, { name: undefined as unknown as string }),
          400,
          'storage.components.validation',
          /name/,
        );
      });

      it('refuses a duplicate live id', async () => {
        await store.createConfiguration(C, { name: 'a', configurationId: 'dup' });
        await rejectsWith(
          store.createConfiguration(C, { name: 'b', configurationId: 'dup' }),
          400,
          'configurationAlreadyExists',
        );
      });

      it('keeps configuration bodies exactly ([] vs {}, key order, floats)', async () => {
        const body = '{"b":[],"a":{},"10":1.0,"1":{"x":[{}]},"n":9007199254740993}';
        const { decodeJson } = await import('../../src/json/index.js');
        const c = await store.createConfiguration(C, { name: 'x', configuration: decodeJson(body) });
        assert.equal(json((await store.getConfiguration(C, c.id)).configuration), body);
      });

      it('lists configurations in byte order of their ids, whatever the database collation', async () => {
        for (const id of ['b', 'B', '_x', 'a_1', 'a-1', '9', '10'])
          await store.createConfiguration(C, { name: id, configurationId: id });
        assert.deepEqual(
          (await store.listConfigurations(C)).map((c) => c.id),
          ['10', '9', 'B', '_x', 'a-1', 'a_1', 'b'],
        );
      });

      it('lists summaries a page at a time: by component then id in byte order, counted, live ones only', async () => {
        for (const id of ['b', 'B', '10', '9'])
          await store.createConfiguration(C, { name: `n ${id}`, configurationId: id });
        await store.createConfiguration('keboola.scheduler', { name: 's', configurationId: 'a' });
        await store.createConfiguration(C, { name: 'gone', configurationId: 'gone' });
        await store.deleteConfiguration(C, 'gone');
        await store.updateConfiguration(C, 'B', { isDisabled: true, changeDescription: 'off' });
        const page = (p: { componentId?: string; limit: number; offset: number }) =>
          store.listConfigurationSummaries!(p);
        const first = await page({ limit: 3, offset: 0 });
        assert.equal(first.total, 5);
        assert.deepEqual(
          first.items.map((c) => `${c.componentId}/${c.id}`),
          [`${C}/10`, `${C}/9`, `${C}/B`],
        );
        assert.deepEqual(first.items[2], { componentId: C, id: 'B', name: 'n B', isDisabled: true, version: 2 });
        const rest = await page({ limit: 3, offset: 3 });
        assert.deepEqual(
          rest.items.map((c) => `${c.componentId}/${c.id}`),
          [`${C}/b`, 'keboola.scheduler/a'],
        );
        const one = await page({ componentId: 'keboola.scheduler', limit: 10, offset: 0 });
        assert.deepEqual([one.total, one.items.map((c) => c.id)], [1, ['a']]);
        const other = backend.session(
          (await backend.authenticate((await backend.createToken({ description: 'x', project: 'other' })).token))!,
        );
        assert.deepEqual(await other.listConfigurationSummaries!({ limit: 10, offset: 0 }), { total: 0, items: [] });
      });

      it('answers 404 for an unknown configuration and an unknown component', async () => {
        await rejectsWith(store.getConfiguration(C, 'nope'), 404, 'notFound', /Configuration nope not found/);
        await rejectsWith(
          store.listConfigurations('keboola.unknown'),
          404,
          'notFound',
          /Component keboola\.unknown not found.*gex components import/,
        );
      });
    });

    describe('update and state', () => {
      it('updates partially, replaces the whole configuration and versions each change', async () => {
        const c = await store.createConfiguration(C, {
          name: 'n',
          description: 'd',
          configuration: plain({ a: 1, b: 2 }),
        });
        const u = await store.updateConfiguration(C, c.id, { configuration: plain({ c: 3 }) });
        assert.equal(u.version, 2);
        assert.equal(u.name, 'n');
        assert.equal(u.description, 'd');
        assert.equal(json(u.configuration), '{"c":3}');
        assert.equal(u.changeDescription, 'Configuration updated');
        const v = await store.updateConfiguration(C, c.id, { description: '', changeDescription: 'cleared' });
        assert.equal(v.version, 3);
        assert.equal(v.description, '');
        assert.equal(v.currentVersion.changeDescription, 'cleared');
      });

      it('creates no version for a no-op update', async () => {
        const c = await store.createConfiguration(C, { name: 'n', configuration: plain({ a: 1, '#s': 'x' }) });
        const u = await store.updateConfiguration(C, c.id, { name: 'n', configuration: plain({ a: 1, '#s': 'x' }) });
        assert.equal(u.version, 1);
        assert.equal(u.currentVersion.versionIdentifier, c.currentVersion.versionIdentifier);
      });

      it('changes state without a version; {} resets it', async () => {
        const c = await store.createConfiguration(C, { name: 'n' });
        const s = await store.updateConfigurationState(C, c.id, plain({ component: { time: { previousStart: 5 } } }));
        assert.equal(s.version, 1);
        assert.equal(json(s.state), '{"component":{"time":{"previousStart":5}}}');
        assert.equal(json((await store.updateConfigurationState(C, c.id, plain({}))).state), '{}');
        const viaUpdate = await store.updateConfiguration(C, c.id, { state: plain({ x: 1 }) });
        assert.equal(viaUpdate.version, 1);
        assert.equal(json(viaUpdate.state), '{"x":1}');
      });
    });

    describe('trash, purge and restore', () => {
      it('moves to trash, purges on the second delete, restores from trash', async () => {
        const c = await store.createConfiguration(C, { name: 'n', configurationId: 't' });
        await store.createRow(C, 't', { rowId: 'r' });
        await store.deleteConfiguration(C, 't');
        await rejectsWith(store.getConfiguration(C, 't'), 404, 'notFound');
        await rejectsWith(store.listRows(C, 't'), 404, 'notFound');
        const trashed = await store.listConfigurations(C, { isDeleted: true });
        assert.deepEqual(
          trashed.map((x) => [x.id, x.version, x.changeDescription, x.isDeleted]),
          [['t', 3, 'Configuration deleted', true]],
        );
        assert.equal((await store.listConfigurations(C)).length, 0);
        const restored = await store.restoreConfiguration(C, 't');
        assert.equal(restored.version, 4);
        assert.equal(restored.changeDescription, 'Configuration restored');
        assert.deepEqual(
          restored.rows.map((r) => r.id),
          ['r'],
        );
        await rejectsWith(store.restoreConfiguration(C, 't'), 404, 'notFound');
        await store.deleteConfiguration(C, 't');
        await store.deleteConfiguration(C, 't');
        assert.equal((await store.listConfigurations(C, { isDeleted: true })).length, 0);
        await rejectsWith(store.deleteConfiguration(C, 't'), 404, 'notFound');
        void c;
      });

      it('re-creating a trashed id continues its version counter without the old rows', async () => {
        await store.createConfiguration(C, { name: 'n', configurationId: 'again' });
        await store.createRow(C, 'again', { rowId: 'old' });
        await store.deleteConfiguration(C, 'again');
        const c = await store.createConfiguration(C, { name: 'new', configurationId: 'again' });
        assert.equal(c.version, 4);
        assert.equal(c.changeDescription, 'Configuration created');
        assert.deepEqual(c.rows, []);
        assert.equal((await store.listConfigurations(C, { isDeleted: true })).length, 0);
      });
    });

    describe('versions', () => {
      it('lists newest first with include, limit and offset; details hold rows without state', async () => {
        const c = await store.createConfiguration(C, { name: 'v1', configuration: plain({ n: 1 }) });
        await store.createRow(C, c.id, { rowId: 'r1', configuration: plain({ r: 1 }), state: plain({ s: 1 }) });
        await store.updateConfiguration(C, c.id, { name: 'v3' });
        const all = await store.listConfigurationVersions(C, c.id);
        assert.deepEqual(
          all.map((v) => [v.version, v.name, v.changeDescription]),
          [
            [3, 'v3', 'Configuration updated'],
            [2, 'v1', 'Row r1 added'],
            [1, 'v1', 'Configuration created'],
          ],
        );
        assert.equal(all[0].configuration, undefined);
        assert.ok(all[0].description !== undefined);
        const page = await store.listConfigurationVersions(C, c.id, {
          include: ['configuration'],
          limit: 1,
          offset: 1,
        });
        assert.deepEqual(
          page.map((v) => v.version),
          [2],
        );
        assert.equal(page[0].name, undefined);
        assert.equal(json(page[0].configuration!), '{"n":1}');
        const detail = await store.getConfigurationVersion(C, c.id, 2);
        assert.deepEqual(
          detail.rows.map((r) => [r.id, r.version, json(r.configuration)]),
          [['r1', 1, '{"r":1}']],
        );
        assert.ok(!('state' in detail.rows[0]));
        await rejectsWith(store.getConfigurationVersion(C, c.id, 99), 404, 'notFound', /Version 99 not found/);
      });

      it('rolls back: rows, row versions, order and states as Keboola does', async () => {
        const c = await store.createConfiguration(C, { name: 'base', configuration: plain({ v: 1 }) });
        await store.createRow(C, c.id, { rowId: 'a', configuration: plain({ a: 1 }) }); // v2
        await store.createRow(C, c.id, { rowId: 'b', configuration: plain({ b: 1 }) }); // v3
        await store.updateConfiguration(C, c.id, { rowsSortOrder: ['b', 'a'] }); // v4
        await store.updateRowState(C, c.id, 'a', plain({ last: 'a-state' }));
        await store.updateConfigurationState(C, c.id, plain({ root: 1 }));
        await store.updateRow(C, c.id, 'b', { configuration: plain({ b: 2 }) }); // v5, b v2
        await store.deleteRow(C, c.id, 'a'); // v6
        await store.createRow(C, c.id, { rowId: 'c' }); // v7
        await store.updateConfiguration(C, c.id, { name: 'changed', configuration: plain({ v: 2 }) }); // v8
        const result = await store.rollbackConfiguration(C, c.id, 4);
        assert.deepEqual(result, { version: 9 });
        const after = await store.getConfiguration(C, c.id);
        assert.equal(after.name, 'base');
        assert.equal(json(after.configuration), '{"v":1}');
        assert.equal(after.changeDescription, 'Rollback to version 4');
        assert.deepEqual(after.rowsSortOrder, ['b', 'a']);
        assert.deepEqual(
          after.rows.map((r) => [r.id, r.version, json(r.configuration), json(r.state), r.changeDescription]),
          [
            ['b', 3, '{"b":1}', '{}', 'Rollback to version 1 (via configuration rollback to version 4)'],
            [
              'a',
              2,
              '{"a":1}',
              '{"last":"a-state"}',
              'Rollback to version 1 (via configuration rollback to version 4)',
            ],
          ],
        );
        assert.equal(json(after.state), '{"root":1}');
        await rejectsWith(store.getRow(C, c.id, 'c'), 404, 'notFound', /Row c not found/);
        const custom = await store.rollbackConfiguration(C, c.id, 1, 'back to start');
        assert.equal(custom.version, 10);
        const start = await store.getConfiguration(C, c.id);
        assert.deepEqual(start.rows, []);
        assert.deepEqual(start.rowsSortOrder, []);
        assert.equal(start.changeDescription, 'back to start');
      });

      it('copies a version into a new configuration', async () => {
        const c = await store.createConfiguration(C, {
          name: 'Source',
          description: 'src',
          configuration: plain({ p: 1 }),
          state: plain({ s: 1 }),
        });
        await store.createRow(C, c.id, { rowId: 'r1', name: 'row one', configuration: plain({ r: 1 }) });
        await store.createRow(C, c.id, { rowId: 'r2', configuration: plain({ r: 2 }) });
        await store.updateRowState(C, c.id, 'r1', plain({ cursor: 7 }));
        await store.deleteRow(C, c.id, 'r2');
        await store.updateRowState(C, c.id, 'r1', plain({ cursor: 8 }));
        const copy = await store.copyConfiguration(C, c.id, 3, { name: 'Copy' });
        assert.notEqual(copy.id, c.id);
        assert.equal(copy.version, 1);
        assert.equal(copy.name, 'Copy');
        assert.equal(copy.description, 'src');
        assert.equal(json(copy.configuration), '{"p":1}');
        assert.equal(json(copy.state), '{}');
        assert.equal(copy.changeDescription, `Copied from configuration "Source" (${c.id}) version 3`);
        assert.deepEqual(
          copy.rows.map((r) => [r.id, r.version, r.name, json(r.configuration), json(r.state), r.changeDescription]),
          [
            ['r1', 1, 'row one', '{"r":1}', '{"cursor":8}', `Copied from configuration "Source" (${c.id}) version 3`],
            ['r2', 1, '', '{"r":2}', '{}', `Copied from configuration "Source" (${c.id}) version 3`],
          ],
        );
        const custom = await store.copyConfiguration(C, c.id, 1, {
          name: 'C2',
          description: 'd2',
          changeDescription: 'mine',
        });
        assert.equal(custom.changeDescription, 'mine');
        assert.equal(custom.description, 'd2');
        assert.equal((await store.listConfigurationVersions(C, custom.id)).length, 1);
      });
    });

    describe('rows', () => {
      it('creates, updates, versions and deletes rows, each a configuration version', async () => {
        const c = await store.createConfiguration(C, { name: 'n' });
        const r = await store.createRow(C, c.id, { rowId: 'main-1-1', configuration: plain({ x: 1 }) });
        assert.equal(r.version, 1);
        assert.equal(r.changeDescription, 'Row main-1-1 added');
        assert.equal((await store.getConfiguration(C, c.id)).version, 2);
        const generated = await store.createRow(C, c.id, {});
        assert.match(generated.id, /^\d+$/);
        const u = await store.updateRow(C, c.id, 'main-1-1', { name: 'renamed' });
        assert.equal(u.version, 2);
        assert.equal(u.changeDescription, 'Row main-1-1 changed');
        assert.equal(u.created, r.created);
        const cfg = await store.getConfiguration(C, c.id);
        assert.equal(cfg.version, 4);
        assert.equal(cfg.changeDescription, 'Row main-1-1 changed');
        const same = await store.updateRow(C, c.id, 'main-1-1', { configuration: plain({ x: 1 }) });
        assert.equal(same.version, 2, 'an unchanged configuration is no new version');
        const state = await store.updateRowState(C, c.id, 'main-1-1', plain({ s: 1 }));
        assert.equal(state.version, 2);
        assert.equal(json(state.state), '{"s":1}');
        await store.deleteRow(C, c.id, 'main-1-1', 'gone');
        const afterDelete = await store.getConfiguration(C, c.id);
        assert.equal(afterDelete.version, 5);
        assert.equal(afterDelete.changeDescription, 'gone');
        await rejectsWith(store.getRow(C, c.id, 'main-1-1'), 404, 'notFound', /Row main-1-1 not found/);
        await rejectsWith(store.deleteRow(C, c.id, 'main-1-1'), 404, 'notFound');
        const reused = await store.createRow(C, c.id, { rowId: 'main-1-1' });
        assert.equal(reused.version, 3, "a deleted row's version counter continues");
        await rejectsWith(store.createRow(C, c.id, { rowId: 'main-1-1' }), 400, 'configurationRowAlreadyExists');
      });

      it('lists row versions, rolls a row back and copies it', async () => {
        const c = await store.createConfiguration(C, { name: 'Cfg' });
        await store.createRow(C, c.id, { rowId: 'r', configuration: plain({ v: 1 }) });
        await store.updateRow(C, c.id, 'r', { configuration: plain({ v: 2 }) });
        await store.updateRowState(C, c.id, 'r', plain({ keep: true }));
        const versions = await store.listRowVersions(C, c.id, 'r');
        assert.deepEqual(
          versions.map((v) => [v.version, json(v.configuration!)]),
          [
            [2, '{"v":2}'],
            [1, '{"v":1}'],
          ],
        );
        assert.equal((await store.listRowVersions(C, c.id, 'r', { include: [] }))[0].configuration, undefined);
        assert.equal(json((await store.getRowVersion(C, c.id, 'r', 1)).configuration!), '{"v":1}');
        const back = await store.rollbackRow(C, c.id, 'r', 1);
        assert.equal(back.version, 3);
        assert.equal(back.changeDescription, 'Rollback to version 1');
        assert.equal(json(back.configuration), '{"v":1}');
        assert.equal(json(back.state), '{"keep":true}');
        const cfg = await store.getConfiguration(C, c.id);
        assert.equal(cfg.changeDescription, 'Row r version 1 rollback');
        const other = await store.createConfiguration(C, { name: 'Other' });
        const copied = await store.copyRow(C, c.id, 'r', 2, { targetConfigId: other.id });
        assert.equal(copied.version, 1);
        assert.equal(json(copied.configuration), '{"v":2}');
        assert.equal(json(copied.state), '{}');
        assert.equal(copied.changeDescription, `Copied from configuration "Cfg" (${c.id}) row r version 2`);
        const target = await store.getConfiguration(C, other.id);
        assert.equal(target.version, 2);
        assert.equal(
          target.changeDescription,
          `Row ${copied.id} copied from configuration "Cfg" (${c.id}) row r version 2`,
        );
        const sameConfig = await store.copyRow(C, c.id, 'r', 1);
        assert.equal((await store.listRows(C, c.id)).length, 2);
        assert.notEqual(sameConfig.id, 'r');
      });
    });

    describe('rowsSortOrder', () => {
      it('orders rows by id when empty and by the order when set; appends and removes ids', async () => {
        const c = await store.createConfiguration(C, { name: 'n' });
        await store.createRow(C, c.id, { rowId: 'main-1-1' });
        await store.createRow(C, c.id, { rowId: 'abcd' });
        assert.deepEqual(
          (await store.listRows(C, c.id)).map((r) => r.id),
          ['abcd', 'main-1-1'],
        );
        const v = (await store.updateConfiguration(C, c.id, { rowsSortOrder: ['main-1-1', 'abcd'] })).version;
        assert.deepEqual(
          (await store.listRows(C, c.id)).map((r) => r.id),
          ['main-1-1', 'abcd'],
        );
        assert.equal(
          (await store.updateConfiguration(C, c.id, { rowsSortOrder: ['main-1-1', 'abcd'] })).version,
          v,
          'same order, no version',
        );
        await store.createRow(C, c.id, { rowId: 'zz' });
        assert.deepEqual((await store.getConfiguration(C, c.id)).rowsSortOrder, ['main-1-1', 'abcd', 'zz']);
        await store.deleteRow(C, c.id, 'abcd');
        assert.deepEqual((await store.getConfiguration(C, c.id)).rowsSortOrder, ['main-1-1', 'zz']);
        const natural = await store.updateConfiguration(C, c.id, { rowsSortOrder: [] });
        assert.deepEqual(natural.rowsSortOrder, []);
        assert.deepEqual(
          natural.rows.map((r) => r.id),
          ['main-1-1', 'zz'],
        );
      });

      it('rejects an unknown id and an incomplete order', async () => {
        const c = await store.createConfiguration(C, { name: 'n' });
        await store.createRow(C, c.id, { rowId: 'a' });
        await store.createRow(C, c.id, { rowId: 'b' });
        await rejectsWith(
          store.updateConfiguration(C, c.id, { rowsSortOrder: ['a', 'b', 'x'] }),
          400,
          'storage.components.validation',
          /"x"/,
        );
        await rejectsWith(
          store.updateConfiguration(C, c.id, { rowsSortOrder: ['a'] }),
          400,
          'validation.invalidRowSortOrder',
          /missing "b"/,
        );
      });
    });

    describe('metadata', () => {
      it('adds, overwrites by key, lists and deletes metadata without versions', async () => {
        const c = await store.createConfiguration(C, { name: 'n' });
        const first = await store.addMetadata(C, c.id, [
          { key: 'k1', value: 'v1' },
          { key: 'k2', value: 'v2' },
        ]);
        assert.deepEqual(
          first.map((m) => [m.key, m.value]),
          [
            ['k1', 'v1'],
            ['k2', 'v2'],
          ],
        );
        const second = await store.addMetadata(C, c.id, [{ key: 'k1', value: 'new' }]);
        assert.deepEqual(
          second.map((m) => [m.id, m.key, m.value]),
          [
            [first[0].id, 'k1', 'new'],
            [first[1].id, 'k2', 'v2'],
          ],
        );
        await store.deleteMetadata(C, c.id, first[1].id);
        assert.deepEqual(
          (await store.listMetadata(C, c.id)).map((m) => m.key),
          ['k1'],
        );
        await rejectsWith(store.deleteMetadata(C, c.id, '999'), 404, 'notFound');
        assert.equal((await store.getConfiguration(C, c.id)).version, 1);
      });
    });

    describe('secrets', () => {
      it('encrypts # values of configurations, rows and state, and decrypts them for the runner only', async () => {
        const c = await store.createConfiguration(C, {
          name: 'n',
          configuration: plain({ parameters: { '#token': 'abc', nested: { '#p': 5 }, plain: 'x' } }),
          state: plain({ '#s': 'st' }),
        });
        const p = toPlain(c.configuration) as {
          parameters: { '#token': string; nested: { '#p': string }; plain: string };
        };
        assert.ok(p.parameters['#token'].startsWith(CIPHER_PREFIX));
        assert.ok(p.parameters.nested['#p'].startsWith(CIPHER_PREFIX));
        assert.equal(p.parameters.plain, 'x');
        assert.ok((toPlain(c.state) as Record<string, string>)['#s'].startsWith(CIPHER_PREFIX));
        const row = await store.createRow(C, c.id, { configuration: plain({ '#k': 'row-secret' }) });
        assert.ok(!json(row.configuration).includes('row-secret'));
        const session = await store.verifyToken();
        assert.equal(
          json(backend.decryptSecrets(session.projectId, C, c.configuration)),
          '{"parameters":{"#token":"abc","nested":{"#p":"5"},"plain":"x"}}',
        );
        // an already encrypted value is stored as given
        const before = (await store.getConfiguration(C, c.id)).version;
        const again = await store.updateConfiguration(C, c.id, { configuration: c.configuration });
        assert.equal(again.version, before);
      });

      it('a cipher of one project cannot be decrypted in another', async () => {
        const c = await store.createConfiguration(C, { name: 'n', configuration: plain({ '#t': 'x' }) });
        const other = await backend.localSession('other-project');
        const otherInfo = await other.verifyToken();
        assert.throws(
          () => backend.decryptSecrets(otherInfo.projectId, C, c.configuration),
          /another project or component/,
        );
      });
    });

    describe('tokens and projects', () => {
      it('isolates projects: a token sees only its own project', async () => {
        const a = await backend.createToken({ description: 'A', project: 'alpha' });
        const b = await backend.createToken({ description: 'B', project: 'beta' });
        const storeA = backend.session((await backend.authenticate(a.token))!);
        const storeB = backend.session((await backend.authenticate(b.token))!);
        const c = await storeA.createConfiguration(C, { name: 'secret plans', configurationId: 'shared-id' });
        assert.equal(c.creatorToken.description, 'A');
        await rejectsWith(storeB.getConfiguration(C, 'shared-id'), 404, 'notFound');
        assert.deepEqual(await storeB.listConfigurations(C), []);
        await rejectsWith(storeB.deleteConfiguration(C, 'shared-id'), 404, 'notFound');
        const own = await storeB.createConfiguration(C, { name: 'mine', configurationId: 'shared-id' });
        assert.equal(own.version, 1, 'the same id in another project is another configuration');
        assert.equal((await storeA.getConfiguration(C, 'shared-id')).name, 'secret plans');
      });

      it('stores only a hash of the token and rejects unknown ones', async () => {
        const { token } = await backend.createToken({ description: 'ci' });
        const rows = await backend.db.all<{ token_hash: string }>('SELECT token_hash FROM tokens');
        assert.ok(rows.every((r) => r.token_hash !== token && r.token_hash.length === 64));
        assert.equal(await backend.authenticate(`${token}x`), null);
        assert.equal((await backend.authenticate(token))!.description, 'ci');
      });

      it('a read-only token can read but not write', async () => {
        const admin = await backend.createToken({ description: 'admin' });
        const viewer = await backend.createToken({ description: 'viewer', readOnly: true });
        const adminStore = backend.session((await backend.authenticate(admin.token))!);
        const readOnly = backend.session((await backend.authenticate(viewer.token))!);
        const c = await adminStore.createConfiguration(C, { name: 'n' });
        assert.equal((await readOnly.getConfiguration(C, c.id)).name, 'n');
        await rejectsWith(readOnly.updateConfiguration(C, c.id, { name: 'x' }), 403, 'accessDenied');
        await rejectsWith(readOnly.createConfiguration(C, { name: 'x' }), 403, 'accessDenied');
        await rejectsWith(readOnly.updateConfigurationState(C, c.id, plain({})), 403, 'accessDenied');
      });
    });

    describe('components', () => {
      it('has ex-generic-v2 built in with a configuration schema, and imports more', async () => {
        const generic = await store.getComponent(C);
        assert.equal(generic.type, 'extractor');
        const schema = toPlain(generic.definition) as { configurationSchema: { required: string[] } };
        assert.deepEqual(schema.configurationSchema.required, ['api', 'config']);
        await backend.importComponents(plain([{ id: 'keboola.wr-db', type: 'writer', name: 'DB writer' }]));
        await store.createConfiguration('keboola.wr-db', { name: 'w' });
        await store.createConfiguration(C, { name: 'e' });
        const writers = await store.listComponents({ componentType: 'writer' });
        assert.deepEqual(
          writers.map((x) => x.component.id),
          ['keboola.wr-db'],
        );
        assert.deepEqual(
          (await store.listComponents()).map((x) => x.component.id),
          [C, 'keboola.wr-db'],
        );
        await assert.rejects(backend.importComponents(plain([{ name: 'no id' }])), /non-empty string "id" and "type"/);
      });
    });

    describe('concurrency', () => {
      it('20 parallel updates give 20 distinct consecutive versions and lose nothing', async () => {
        const c = await store.createConfiguration(C, { name: 'n' });
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            store.updateConfiguration(C, c.id, {
              configuration: plain({ update: i }),
              changeDescription: `update ${i}`,
            }),
          ),
        );
        assert.deepEqual(
          results.map((r) => r.version).sort((a, b) => a - b),
          Array.from({ length: 20 }, (_, i) => i + 2),
        );
        const versions = await store.listConfigurationVersions(C, c.id, { include: ['configuration'] });
        assert.equal(versions.length, 21);
        const seen = new Set(versions.slice(0, 20).map((v) => v.changeDescription));
        for (let i = 0; i < 20; i++) assert.ok(seen.has(`update ${i}`), `update ${i} is in the history`);
      });

      it('concurrent creates of one id: one succeeds, the others get configurationAlreadyExists', async () => {
        await Promise.all(Array.from({ length: 10 }, () => store.listConfigurations(C))); // open the pool's connections: real concurrency
        const attempts = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) =>
            store.createConfiguration(C, { name: `try ${i}`, configurationId: 'race' }),
          ),
        );
        const created = attempts.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
        assert.equal(created.length, 1, 'exactly one create wins');
        for (const a of attempts) {
          if (a.status === 'rejected')
            await rejectsWith(
              Promise.reject(a.reason as Error),
              400,
              'configurationAlreadyExists',
              /Configuration race already exists/,
            );
        }
        const stored = await store.getConfiguration(C, 'race');
        assert.equal(stored.name, created[0].name, 'the winner was not overwritten');
        assert.equal(stored.version, 1);
        assert.equal((await store.listConfigurationVersions(C, 'race')).length, 1);
      });

      it('concurrent creates without an id get distinct generated ids', async () => {
        const created = await Promise.all(
          Array.from({ length: 10 }, (_, i) => store.createConfiguration(C, { name: `gen ${i}` })),
        );
        assert.equal(new Set(created.map((c) => c.id)).size, 10);
        assert.equal((await store.listConfigurations(C)).length, 10);
      });

      it('concurrent row creation, reordering and rollback keep rowsSortOrder a permutation of the rows', async () => {
        const c = await store.createConfiguration(C, { name: 'rows' });
        await store.createRow(C, c.id, { rowId: 'a' });
        await store.createRow(C, c.id, { rowId: 'b' });
        const ordered = await store.updateConfiguration(C, c.id, { rowsSortOrder: ['b', 'a'] });
        const outcomes = await Promise.allSettled([
          ...Array.from({ length: 10 }, (_, i) => store.createRow(C, c.id, { rowId: `r${i}` })),
          store.rollbackConfiguration(C, c.id, ordered.version),
          store.deleteRow(C, c.id, 'a'),
          store.rollbackConfiguration(C, c.id, ordered.version),
        ]);
        assert.deepEqual(
          outcomes.filter((o) => o.status === 'rejected'),
          [],
          'every operation succeeded',
        );

        const isPermutation = (order: string[], ids: string[]) =>
          order.length === 0 || [...order].sort().join() === [...ids].sort().join();
        const current = await store.getConfiguration(C, c.id);
        assert.ok(
          isPermutation(
            current.rowsSortOrder,
            current.rows.map((r) => r.id),
          ),
          `order ${current.rowsSortOrder} lists rows ${current.rows.map((r) => r.id)}`,
        );
        assert.equal(current.version, ordered.version + outcomes.length, 'one version per operation');
        const versions = await store.listConfigurationVersions(C, c.id, { limit: 1000 });
        assert.deepEqual(
          versions.map((v) => v.version),
          Array.from({ length: current.version }, (_, i) => current.version - i),
          'consecutive versions',
        );
        for (let v = ordered.version; v <= current.version; v++) {
          const detail = await store.getConfigurationVersion(C, c.id, v);
          assert.ok(
            isPermutation(
              detail.rowsSortOrder,
              detail.rows.map((r) => r.id),
            ),
            `version ${v}: order ${detail.rowsSortOrder} lists rows ${detail.rows.map((r) => r.id)}`,
          );
        }
      });

      it('concurrent first uses of a project create it once, with one local token', async () => {
        const sessions = await Promise.all(Array.from({ length: 5 }, () => backend.localSession('fresh')));
        const infos = await Promise.all(sessions.map((s) => s.verifyToken()));
        assert.equal(new Set(infos.map((i) => i.projectId)).size, 1);
        assert.equal(new Set(infos.map((i) => i.id)).size, 1);
        const tokens = await Promise.all(
          Array.from({ length: 5 }, (_, i) => backend.createToken({ description: `t${i}`, project: 'newer' })),
        );
        assert.equal(new Set(tokens.map((t) => t.info.projectId)).size, 1);
        assert.equal(new Set(tokens.map((t) => t.info.id)).size, 5);
      });
    });
  });
}
