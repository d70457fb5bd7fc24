import assert from 'node:assert/strict';
import {
  BRANCH,
  COMPONENT,
  configsPath,
  DEPRECATED,
  describeEachBackend,
  TestServer,
  useTestServer,
  type Json,
} from '../support/storage-api-server.js';

const VERSION_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}$/;

describeEachBackend('server: configurations', (backend) => {
  const server = useTestServer({ backend });

  describe('create and read', () => {
    it('creates with defaults: 201, version 1, "Configuration created", generated string id', async () => {
      const res = await server().post(configsPath(), { json: { name: 'Main' } });
      assert.equal(res.status, 201);
      const c = res.body;
      assert.deepEqual(Object.keys(c), [
        'id',
        'name',
        'description',
        'created',
        'creatorToken',
        'version',
        'changeDescription',
        'isDisabled',
        'isDeleted',
        'configuration',
        'rowsSortOrder',
        'rows',
        'state',
        'currentVersion',
      ]);
      assert.equal(typeof c.id, 'string');
      assert.match(c.id, /^\d+$/);
      assert.equal(c.name, 'Main');
      assert.equal(c.description, '');
      assert.match(c.created, TIMESTAMP);
      assert.equal(typeof c.creatorToken.id, 'number');
      assert.equal(c.creatorToken.description, 'alpha admin');
      assert.equal(c.version, 1);
      assert.equal(c.changeDescription, 'Configuration created');
      assert.equal(c.isDisabled, false);
      assert.equal(c.isDeleted, false);
      assert.deepEqual(c.rowsSortOrder, []);
      assert.deepEqual(c.rows, []);
      assert.ok(res.text.includes('"configuration":{}') && res.text.includes('"state":{}'), 'empty bodies are objects');
      assert.equal(c.currentVersion.changeDescription, 'Configuration created');
      assert.match(c.currentVersion.versionIdentifier, VERSION_ID);
      assert.match(c.currentVersion.created, TIMESTAMP);

      const detail = await server().get(configsPath(c.id));
      assert.equal(detail.status, 200);
      assert.deepEqual(detail.body, c, 'detail equals the create response');
    });

    it('keeps a client id (numbers become strings; empty means generate)', async () => {
      const named = await server().createConfig({
        name: 'Named',
        configurationId: 'main-1',
        description: 'd',
        isDisabled: true,
      });
      assert.equal(named.id, 'main-1');
      assert.equal(named.description, 'd');
      assert.equal(named.isDisabled, true);
      const numeric = await server().createConfig({ name: 'Numeric', configurationId: 100 });
      assert.equal(numeric.id, '100');
      const empty = await server().createConfig({ name: 'Empty id', configurationId: '' });
      assert.match(empty.id, /^\d+$/);
      assert.notEqual(empty.id, '');
    });

    it('refuses a duplicate live id and a missing name', async () => {
      await server().createConfig({ name: 'Dup', configurationId: 'dup-1' });
      const dup = await server().post(configsPath(), { json: { name: 'Dup again', configurationId: 'dup-1' } });
      assert.equal(dup.status, 400);
      assert.equal(dup.body.code, 'configurationAlreadyExists');
      const noName = await server().post(configsPath(), { json: { description: 'x' } });
      assert.equal(noName.status, 400);
      assert.equal(noName.body.code, 'storage.components.validation');
      assert.match(noName.body.error, /name/);
    });

    it('answers 404 notFound for an unknown configuration', async () => {
      const res = await server().get(configsPath('nope'));
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'notFound');
      assert.equal(res.body.error, 'Configuration nope not found');
    });

    it('lists the configurations of a component with configuration, rows and state', async () => {
      const local = await TestServer.start({ backend });
      try {
        const a = await local.createConfig({ name: 'A', configuration: { x: 1 }, state: { s: 1 } });
        await local.createRow(a.id, { rowId: 'r1', configuration: { y: 2 }, state: { rs: 1 } });
        await local.createConfig({ name: 'B' });
        const res = await local.get(configsPath());
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.map((c: Json) => c.name).sort(), ['A', 'B']);
        const listed = res.body.find((c: Json) => c.name === 'A');
        assert.deepEqual(listed.configuration, { x: 1 });
        assert.deepEqual(listed.state, { s: 1 });
        assert.deepEqual(listed.rows[0].configuration, { y: 2 });
        assert.deepEqual(listed.rows[0].state, { rs: 1 });
        assert.ok(listed.currentVersion.versionIdentifier);
        assert.deepEqual(listed, (await local.get(configsPath(a.id))).body);
      } finally {
        await local.close();
      }
    });
  });

  describe('list components', () => {
    let local: TestServer;
    before(async () => {
      local = await TestServer.start({ backend });
    });
    after(async () => local.close());

    it('returns [] for an empty project', async () => {
      const res = await local.get(`${BRANCH}/components`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, []);
    });

    it('shapes configurations by include', async () => {
      const c = await local.createConfig({ name: 'Inc', configuration: { p: 1 }, state: { s: 1 } });
      await local.createRow(c.id, { rowId: 'r', configuration: { rp: 1 }, state: { rs: 1 } });
      await local.createConfig({ name: 'Writer' }, BRANCH, 'keboola.wr-db');

      const plain = await local.get(`${BRANCH}/components`);
      assert.equal(plain.body.length, 2);
      const gex = plain.body.find((x: Json) => x.id === COMPONENT);
      assert.equal(gex.type, 'extractor');
      const item = gex.configurations[0];
      assert.equal(item.name, 'Inc');
      for (const key of ['configuration', 'rows', 'state']) assert.equal(key in item, false, key);
      assert.ok('isDisabled' in item && 'currentVersion' in item && 'rowsSortOrder' in item);

      const rows = (await local.get(`${BRANCH}/components?include=rows`)).body.find((x: Json) => x.id === COMPONENT)
        .configurations[0];
      assert.equal('configuration' in rows, false);
      assert.equal(rows.rows.length, 1);
      assert.equal('configuration' in rows.rows[0], false);
      assert.equal('state' in rows.rows[0], false);

      const all = (await local.get(`${BRANCH}/components?include=configuration,rows,state`)).body.find(
        (x: Json) => x.id === COMPONENT,
      ).configurations[0];
      assert.deepEqual(all.configuration, { p: 1 });
      assert.deepEqual(all.state, { s: 1 });
      assert.deepEqual(all.rows[0].configuration, { rp: 1 });
      assert.deepEqual(all.rows[0].state, { rs: 1 });

      const configAndState = (await local.get(`${BRANCH}/components?include=configuration,state`)).body.find(
        (x: Json) => x.id === COMPONENT,
      ).configurations[0];
      assert.deepEqual(configAndState.configuration, { p: 1 });
      assert.equal('rows' in configAndState, false);
    });

    it('filters by componentType and refuses unknown includes with an errors list', async () => {
      const writers = await local.get(`${BRANCH}/components?componentType=writer`);
      assert.deepEqual(
        writers.body.map((x: Json) => x.id),
        ['keboola.wr-db'],
      );
      const phpStyle = await local.get(`${BRANCH}/components?include=&isDeleted=0&componentType=`);
      assert.equal(phpStyle.status, 200);
      assert.equal(phpStyle.body.length, 2);

      const bad = await local.get(`${BRANCH}/components?include=configuration,invalid`);
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'storage.components.validation');
      assert.match(bad.body.error, /^Invalid request/);
      assert.deepEqual(bad.body.errors, [
        {
          key: 'include',
          message: 'Invalid include parameters: "invalid". Only following are allowed: configuration, rows, state.',
        },
      ]);
      const badFlag = await local.get(`${BRANCH}/components?isDeleted=maybe`);
      assert.equal(badFlag.status, 400);
      assert.match(badFlag.body.error, /isDeleted/);
    });
  });

  describe('update', () => {
    it('updates partially, bumps the version once per real change and keeps no-op updates silent', async () => {
      const c = await server().createConfig({ name: 'Upd', description: 'one', configuration: { a: 1 } });
      const res = await server().put(configsPath(c.id), { json: { description: 'two' } });
      assert.equal(res.status, 200);
      assert.equal(res.body.version, 2);
      assert.equal(res.body.name, 'Upd');
      assert.equal(res.body.description, 'two');
      assert.deepEqual(res.body.configuration, { a: 1 });
      assert.equal(res.body.changeDescription, 'Configuration updated');
      assert.equal(res.body.created, c.created, 'created is the creation time');
      assert.notEqual(res.body.currentVersion.versionIdentifier, c.currentVersion.versionIdentifier);

      const same = await server().put(configsPath(c.id), { json: { description: 'two', configuration: { a: 1 } } });
      assert.equal(same.body.version, 2, 'nothing changed');
      assert.equal(same.body.currentVersion.versionIdentifier, res.body.currentVersion.versionIdentifier);

      const empty = await server().put(configsPath(c.id), { json: {} });
      assert.equal(empty.body.version, 2);

      const custom = await server().put(configsPath(c.id), {
        json: { configuration: { a: 2 }, changeDescription: 'new a' },
      });
      assert.equal(custom.body.version, 3);
      assert.equal(custom.body.changeDescription, 'new a');
      assert.deepEqual(custom.body.configuration, { a: 2 }, 'replaced, not merged');

      const cleared = await server().put(configsPath(c.id), { json: { description: '' } });
      assert.equal(cleared.body.description, '');
      assert.equal(cleared.body.version, 4);

      const versions = await server().get(configsPath(c.id, 'versions'));
      assert.deepEqual(
        versions.body.map((v: Json) => [v.version, v.changeDescription]),
        [
          [4, 'Configuration updated'],
          [3, 'new a'],
          [2, 'Configuration updated'],
          [1, 'Configuration created'],
        ],
      );
    });

    it('sets state through PUT without a new version', async () => {
      const c = await server().createConfig({ name: 'Put state' });
      const res = await server().put(configsPath(c.id), { json: { state: { cursor: 5 } } });
      assert.equal(res.status, 200);
      assert.equal(res.body.version, 1);
      assert.deepEqual(res.body.state, { cursor: 5 });
      assert.deepEqual((await server().get(configsPath(c.id))).body.state, { cursor: 5 });
    });
  });

  describe('state endpoint', () => {
    it('replaces the state without a version and answers exactly what GET shows', async () => {
      const c = await server().createConfig({ name: 'State', state: { old: true } });
      const res = await server().put(configsPath(c.id, 'state'), { json: { state: { component: { lastId: 7 } } } });
      assert.equal(res.status, 200);
      assert.equal(res.body.version, 1);
      assert.equal(res.body.currentVersion.versionIdentifier, c.currentVersion.versionIdentifier);
      assert.equal(res.body.changeDescription, 'Configuration created');
      assert.deepEqual(res.body.state, { component: { lastId: 7 } });
      const detail = await server().get(configsPath(c.id));
      assert.equal(res.text, detail.text);

      const reset = await server().put(configsPath(c.id, 'state'), { json: { state: {} } });
      assert.ok(reset.text.includes('"state":{}'));
      assert.deepEqual((await server().get(configsPath(c.id))).body.state, {});
      assert.equal((await server().get(configsPath(c.id, 'versions'))).body.length, 1);
    });

    it('accepts only the key state, with Keboola messages', async () => {
      const c = await server().createConfig({ name: 'State rules' });
      const cases: Array<[unknown, string, string]> = [
        [
          { state: {}, description: 'x' },
          'storage.components.validation',
          'Invalid parameters - description: This field was not expected.',
        ],
        [{}, 'storage.components.validation', 'Invalid parameters - state: This field is missing.'],
        [
          { state: '{broken' },
          'storage.components.validation',
          'Invalid parameters - state: This value should be valid JSON.',
        ],
        [{ state: '' }, 'storage.components.validation', 'Invalid parameters - state: This value should not be blank.'],
      ];
      for (const [json, code, error] of cases) {
        const res = await server().put(configsPath(c.id, 'state'), { json });
        assert.equal(res.status, 400, JSON.stringify(json));
        assert.equal(res.body.code, code);
        assert.equal(res.body.error, error);
      }
      const asString = await server().put(configsPath(c.id, 'state'), { json: { state: '{"k":[]}' } });
      assert.equal(asString.status, 200);
      assert.ok(asString.text.includes('"state":{"k":[]}'));
    });
  });

  describe('trash, purge, restore', () => {
    it('trashes, lists as deleted, restores with rows, purges on the second delete', async () => {
      const c = await server().createConfig({ name: 'Trash me', configurationId: 'trash-1', isDisabled: true });
      await server().createRow(c.id, { rowId: 'row-a', state: { rs: 1 } });

      const del = await server().delete(configsPath(c.id));
      assert.equal(del.status, 204);
      assert.equal(del.text, '');
      assert.equal((await server().get(configsPath(c.id))).status, 404);
      assert.equal((await server().get(configsPath(c.id, 'rows'))).status, 404);
      const live = await server().get(configsPath());
      assert.equal(
        live.body.some((x: Json) => x.id === c.id),
        false,
      );
      const trashed = await server().get(`${configsPath()}?isDeleted=true`);
      const item = trashed.body.find((x: Json) => x.id === c.id);
      assert.equal(item.isDeleted, true);
      assert.equal(item.version, 3);
      assert.equal(item.changeDescription, 'Configuration deleted');
      const deletedComponents = (await server().get(`${BRANCH}/components?isDeleted=1`)).body;
      assert.equal(
        deletedComponents.find((x: Json) => x.id === COMPONENT).configurations.some((x: Json) => x.id === c.id),
        true,
      );

      const restored = await server().post(configsPath(c.id, 'restore'), { json: {} });
      assert.equal(restored.status, 200);
      assert.equal(restored.body.version, 4);
      assert.equal(restored.body.changeDescription, 'Configuration restored');
      assert.equal(restored.body.isDeleted, false);
      assert.equal(restored.body.isDisabled, true);
      assert.deepEqual(
        restored.body.rows.map((r: Json) => r.id),
        ['row-a'],
      );
      assert.deepEqual(restored.body.rows[0].state, { rs: 1 });
      const again = await server().post(configsPath(c.id, 'restore'));
      assert.equal(again.status, 404, 'restoring a live configuration');

      assert.equal((await server().delete(configsPath(c.id))).status, 204);
      assert.equal((await server().delete(configsPath(c.id))).status, 204, 'second delete purges');
      assert.equal(
        (await server().get(`${configsPath()}?isDeleted=true`)).body.some((x: Json) => x.id === c.id),
        false,
      );
      assert.equal((await server().delete(configsPath(c.id))).status, 404, 'nothing left to delete');
      const fresh = await server().createConfig({ name: 'Reborn', configurationId: 'trash-1' });
      assert.equal(fresh.version, 1, 'purged: history is gone');
    });

    it('re-creating a trashed id continues its history without the old rows', async () => {
      const c = await server().createConfig({ name: 'Renew', configurationId: 'renew-1' });
      await server().createRow(c.id, { rowId: 'old' });
      await server().delete(configsPath(c.id));
      const renewed = await server().post(configsPath(), { json: { name: 'Renewed', configurationId: 'renew-1' } });
      assert.equal(renewed.status, 201);
      assert.equal(renewed.body.version, 4);
      assert.equal(renewed.body.changeDescription, 'Configuration created');
      assert.deepEqual(renewed.body.rows, []);
      assert.equal(
        (await server().get(`${configsPath()}?isDeleted=true`)).body.some((x: Json) => x.id === c.id),
        false,
      );
    });
  });

  describe('rowsSortOrder', () => {
    it('orders rows, versions the order and refuses unknown or missing ids', async () => {
      const c = await server().createConfig({ name: 'Sorted' });
      for (const rowId of ['b', 'a', 'c']) await server().createRow(c.id, { rowId });
      const natural = await server().get(configsPath(c.id));
      assert.deepEqual(
        natural.body.rows.map((r: Json) => r.id),
        ['a', 'b', 'c'],
        'by id when unsorted',
      );
      assert.equal(natural.body.version, 4);

      const unknown = await server().put(configsPath(c.id), { json: { rowsSortOrder: ['c', 'b', 'a', 'zzz'] } });
      assert.equal(unknown.status, 400);
      assert.equal(unknown.body.code, 'storage.components.validation');
      assert.match(unknown.body.error, /zzz/);
      const missing = await server().put(configsPath(c.id), { json: { rowsSortOrder: ['c', 'a'] } });
      assert.equal(missing.status, 400);
      assert.equal(missing.body.code, 'validation.invalidRowSortOrder');

      const sorted = await server().put(configsPath(c.id), { json: { rowsSortOrder: ['c', 'a', 'b'] } });
      assert.equal(sorted.status, 200);
      assert.equal(sorted.body.version, 5);
      assert.deepEqual(sorted.body.rowsSortOrder, ['c', 'a', 'b']);
      assert.deepEqual(
        sorted.body.rows.map((r: Json) => r.id),
        ['c', 'a', 'b'],
      );
      assert.deepEqual(
        (await server().get(configsPath(c.id, 'rows'))).body.map((r: Json) => r.id),
        ['c', 'a', 'b'],
      );
      const again = await server().put(configsPath(c.id), { json: { rowsSortOrder: ['c', 'a', 'b'] } });
      assert.equal(again.body.version, 5, 'same order: no version');

      const added = await server().createRow(c.id, { rowId: '0-new' });
      const afterAdd = await server().get(configsPath(c.id));
      assert.deepEqual(afterAdd.body.rowsSortOrder, ['c', 'a', 'b', added.id], 'a new row is appended');
      await server().delete(configsPath(c.id, 'rows', 'a'));
      assert.deepEqual(
        (await server().get(configsPath(c.id))).body.rowsSortOrder,
        ['c', 'b', '0-new'],
        'a deleted row is removed',
      );

      const version5 = await server().get(configsPath(c.id, 'versions', '5'));
      assert.deepEqual(version5.body.rowsSortOrder, ['c', 'a', 'b']);
      assert.deepEqual(
        version5.body.rows.map((r: Json) => r.id),
        ['c', 'a', 'b'],
      );
    });
  });

  describe('exact values and secrets', () => {
    it('round-trips [] vs {}, key order, 1.0 and int64 exactly, at every depth', async () => {
      const body =
        '{"zeta":[],"alpha":{},"2":"two","1":"one","float":1.0,"exp":1.5e+30,"big":9223372036854775807,"nested":{"list":[{},[],{"b":1,"a":[{}]}]}}';
      const created = await server().post(configsPath(), {
        rawJson: `{"name":"Exact","configuration":${body},"state":${body}}`,
      });
      assert.equal(created.status, 201);
      assert.ok(created.text.includes(`"configuration":${body}`), created.text);
      const detail = await server().get(configsPath(created.body.id));
      const start = detail.text.indexOf('"configuration":') + '"configuration":'.length;
      assert.equal(detail.text.slice(start, start + body.length), body);
      assert.ok(detail.text.includes(`"state":${body}`));

      const row = await server().post(configsPath(created.body.id, 'rows'), { rawJson: `{"configuration":${body}}` });
      assert.ok(row.text.includes(`"configuration":${body}`));
      const version = await server().get(configsPath(created.body.id, 'versions', '1'));
      assert.ok(version.text.includes(`"configuration":${body}`));
    });

    it('stores # values encrypted and never answers with the plaintext', async () => {
      const plain = 'very-secret-password';
      const res = await server().post(configsPath(), {
        json: {
          name: 'Secrets',
          configuration: { parameters: { '#password': plain, user: 'u' } },
          state: { '#token': plain },
        },
      });
      assert.equal(res.status, 201);
      assert.equal(res.text.includes(plain), false);
      assert.match(res.body.configuration.parameters['#password'], /^KBC::ProjectSecure::/);
      assert.equal(res.body.configuration.parameters.user, 'u');
      assert.match(res.body.state['#token'], /^KBC::ProjectSecure::/);

      const row = await server().post(configsPath(res.body.id, 'rows'), { json: { configuration: { '#key': plain } } });
      assert.match(row.body.configuration['#key'], /^KBC::ProjectSecure::/);
      for (const url of [
        configsPath(res.body.id),
        configsPath(res.body.id, 'versions', '2'),
        configsPath(res.body.id, 'rows', row.body.id, 'versions'),
        `${BRANCH}/components?include=configuration,rows,state`,
      ]) {
        const read = await server().get(url);
        assert.equal(read.status, 200);
        assert.equal(read.text.includes(plain), false, url);
      }
      // an unchanged re-send keeps the stored cipher: no new version
      const resent = await server().put(configsPath(res.body.id), {
        json: { configuration: { parameters: { '#password': plain, user: 'u' } } },
      });
      assert.equal(resent.body.version, 2);
    });

    it('refuses a configuration over 4 MB with 400 (the default body limit is larger)', async () => {
      const big = 'x'.repeat(4 * 1024 * 1024 + 10);
      const res = await server().post(configsPath(), { json: { name: 'Big', configuration: { big } } });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'storage.components.validation');
      assert.match(res.body.error, /configuration.*4 MB/);
    });
  });

  describe('deprecated paths', () => {
    it('answer exactly as the branch paths', async () => {
      const created = await server().post(`${DEPRECATED}/components/${COMPONENT}/configs`, {
        json: { name: 'Old style', configuration: { a: 1 } },
      });
      assert.equal(created.status, 201);
      const id = created.body.id;
      await server().post(`${DEPRECATED}/components/${COMPONENT}/configs/${id}/rows`, { json: { rowId: 'r' } });
      for (const suffix of [
        '',
        '/rows',
        '/rows/r',
        '/versions',
        '/versions/2',
        '/rows/r/versions',
        '/rows/r/versions/1',
      ]) {
        const old = await server().get(`${DEPRECATED}/components/${COMPONENT}/configs/${id}${suffix}`);
        const branch = await server().get(`${BRANCH}/components/${COMPONENT}/configs/${id}${suffix}`);
        assert.equal(old.status, 200, suffix);
        assert.equal(old.text, branch.text, suffix);
      }
      const oldList = await server().get(`${DEPRECATED}/components?include=configuration`);
      assert.equal(oldList.text, (await server().get(`${BRANCH}/components?include=configuration`)).text);
      const update = await server().put(`${DEPRECATED}/components/${COMPONENT}/configs/${id}`, {
        json: { name: 'Renamed' },
      });
      assert.equal(update.body.version, 3);
      assert.equal((await server().get(`${BRANCH}/components/${COMPONENT}/configs/${id}`)).body.name, 'Renamed');
      assert.equal((await server().delete(`${DEPRECATED}/components/${COMPONENT}/configs/${id}`)).status, 204);
      assert.equal((await server().get(`${BRANCH}/components/${COMPONENT}/configs/${id}`)).status, 404);
    });
  });
});
