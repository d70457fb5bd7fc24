import assert from 'node:assert/strict';
import { configsPath, describeEachBackend, useTestServer, type Json } from '../support/storage-api-server.js';

describeEachBackend('server: configuration rows', (backend) => {
  const server = useTestServer({ backend });

  async function version(configId: string): Promise<Json> {
    return (await server().get(configsPath(configId))).body;
  }

  describe('create, read, update, state, delete', () => {
    it('creates a row: 201, row version 1, configuration version +1, "Row X added" on both', async () => {
      const c = await server().createConfig({ name: 'Rows' });
      const res = await server().post(configsPath(c.id, 'rows'), { json: { rowId: 'main-1-1' } });
      assert.equal(res.status, 201);
      const row = res.body;
      assert.deepEqual(Object.keys(row), [
        'id',
        'name',
        'description',
        'isDisabled',
        'configuration',
        'state',
        'version',
        'created',
        'creatorToken',
        'changeDescription',
        'versionIdentifier',
      ]);
      assert.equal(row.id, 'main-1-1');
      assert.equal(row.name, '');
      assert.equal(row.description, '');
      assert.equal(row.isDisabled, false);
      assert.ok(res.text.includes('"configuration":{}') && res.text.includes('"state":{}'));
      assert.equal(row.version, 1);
      assert.equal(row.changeDescription, 'Row main-1-1 added');
      const config = await version(c.id);
      assert.equal(config.version, 2);
      assert.equal(config.changeDescription, 'Row main-1-1 added');
      assert.deepEqual(config.rows[0], row, 'create response equals the listed row');

      const generated = await server().createRow(c.id, {
        rowId: '',
        name: 'gen',
        isDisabled: 'true',
        configuration: { a: 1 },
        state: { s: 1 },
      });
      assert.match(generated.id, /^\d+$/);
      assert.equal(generated.isDisabled, true);
      assert.deepEqual(generated.state, { s: 1 });

      const dup = await server().post(configsPath(c.id, 'rows'), { json: { rowId: 'main-1-1' } });
      assert.equal(dup.status, 400);
      assert.match(dup.body.code, /AlreadyExists$/);
    });

    it('lists and reads rows; unknown rows are 404 "Row X not found"', async () => {
      const c = await server().createConfig({ name: 'Read rows' });
      const r1 = await server().createRow(c.id, { rowId: 'r1', name: 'one' });
      const r2 = await server().createRow(c.id, { rowId: 'r2', name: 'two' });
      const list = await server().get(configsPath(c.id, 'rows'));
      assert.equal(list.status, 200);
      assert.deepEqual(list.body, [r1, r2]);
      const detail = await server().get(configsPath(c.id, 'rows', 'r2'));
      assert.deepEqual(detail.body, r2);
      const missing = await server().get(configsPath(c.id, 'rows', 'nope'));
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'notFound');
      assert.equal(missing.body.error, 'Row nope not found');
    });

    it('updates a row: both versions +1 with "Row X changed"; an empty body changes nothing', async () => {
      const c = await server().createConfig({ name: 'Update rows' });
      const row = await server().createRow(c.id, { rowId: 'u', configuration: { a: 1 } });
      const res = await server().put(configsPath(c.id, 'rows', 'u'), {
        json: { name: 'renamed', configuration: { a: 2 } },
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.version, 2);
      assert.equal(res.body.name, 'renamed');
      assert.deepEqual(res.body.configuration, { a: 2 });
      assert.equal(res.body.changeDescription, 'Row u changed');
      assert.equal(res.body.created, row.created);
      const config = await version(c.id);
      assert.equal(config.version, 3);
      assert.equal(config.changeDescription, 'Row u changed');

      const empty = await server().put(configsPath(c.id, 'rows', 'u'), { json: {} });
      assert.equal(empty.body.version, 2);
      const sameConfig = await server().put(configsPath(c.id, 'rows', 'u'), { json: { configuration: { a: 2 } } });
      assert.equal(sameConfig.body.version, 2);
      assert.equal((await version(c.id)).version, 3);

      const custom = await server().put(configsPath(c.id, 'rows', 'u'), {
        json: { isDisabled: 1, changeDescription: 'off' },
      });
      assert.equal(custom.body.isDisabled, true);
      assert.equal(custom.body.changeDescription, 'off');
      assert.equal((await version(c.id)).changeDescription, 'off');
    });

    it('sets row state without versions; only the key state is accepted (with Keboola codes)', async () => {
      const c = await server().createConfig({ name: 'Row state' });
      const row = await server().createRow(c.id, { rowId: 's', state: { old: 1 } });
      const res = await server().put(configsPath(c.id, 'rows', 's', 'state'), { json: { state: { cursor: 'x' } } });
      assert.equal(res.status, 200);
      assert.equal(res.body.version, 1);
      assert.equal(res.body.versionIdentifier, row.versionIdentifier);
      assert.deepEqual(res.body.state, { cursor: 'x' });
      assert.equal(res.text, (await server().get(configsPath(c.id, 'rows', 's'))).text);
      assert.equal((await version(c.id)).version, 2);

      const cleared = await server().put(configsPath(c.id, 'rows', 's', 'state'), { json: { state: {} } });
      assert.ok(cleared.text.includes('"state":{}'));

      const cases: Array<[unknown, string, string]> = [
        [
          { state: {}, description: 'x' },
          'storage.componentsRows.validation',
          'Invalid parameters - description: This field was not expected.',
        ],
        [{}, 'validation.invalidStateFormat', 'Invalid state body format: This field is missing.'],
        [
          { state: 'nope{' },
          'validation.invalidStateFormat',
          'Invalid state body format: This value should be valid JSON.',
        ],
        [
          { state: null },
          'validation.invalidStateFormat',
          'Invalid state body format: This value should not be blank.',
        ],
      ];
      for (const [json, code, error] of cases) {
        const bad = await server().put(configsPath(c.id, 'rows', 's', 'state'), { json });
        assert.equal(bad.status, 400, JSON.stringify(json));
        assert.equal(bad.body.code, code);
        assert.equal(bad.body.error, error);
      }
    });

    it('deletes a row: 204, configuration version +1 "Row X deleted"; a re-created id continues its versions', async () => {
      const c = await server().createConfig({ name: 'Delete rows' });
      await server().createRow(c.id, { rowId: 'd' });
      const del = await server().delete(configsPath(c.id, 'rows', 'd'));
      assert.equal(del.status, 204);
      assert.equal(del.text, '');
      const config = await version(c.id);
      assert.equal(config.version, 3);
      assert.equal(config.changeDescription, 'Row d deleted');
      assert.deepEqual(config.rows, []);
      assert.equal((await server().get(configsPath(c.id, 'rows', 'd'))).status, 404);
      assert.equal((await server().delete(configsPath(c.id, 'rows', 'd'))).status, 404);

      const again = await server().createRow(c.id, { rowId: 'd' });
      assert.equal(again.version, 2, 'a reused row id continues its counter');

      const withText = await server().delete(configsPath(c.id, 'rows', 'd'), { json: { changeDescription: 'bye' } });
      assert.equal(withText.status, 204);
      assert.equal((await version(c.id)).changeDescription, 'bye');
    });
  });

  describe('row versions, rollback, copy', () => {
    it('lists row versions newest first; include absent = configuration, include= none; limit/offset', async () => {
      const c = await server().createConfig({ name: 'Row versions' });
      await server().createRow(c.id, { rowId: 'v', configuration: { n: 1 } });
      await server().put(configsPath(c.id, 'rows', 'v'), { json: { configuration: { n: 2 } } });
      await server().put(configsPath(c.id, 'rows', 'v'), { json: { configuration: { n: 3 } } });

      const list = await server().get(configsPath(c.id, 'rows', 'v', 'versions'));
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.map((v: Json) => v.version),
        [3, 2, 1],
      );
      assert.deepEqual(
        list.body.map((v: Json) => v.configuration),
        [{ n: 3 }, { n: 2 }, { n: 1 }],
      );
      assert.deepEqual(Object.keys(list.body[0]), [
        'version',
        'name',
        'description',
        'isDisabled',
        'created',
        'creatorToken',
        'changeDescription',
        'versionIdentifier',
        'configuration',
      ]);
      assert.equal(list.body[2].changeDescription, 'Row v added');

      const none = await server().get(`${configsPath(c.id, 'rows', 'v', 'versions')}?include=`);
      assert.equal('configuration' in none.body[0], false);
      const unknownOnly = await server().get(`${configsPath(c.id, 'rows', 'v', 'versions')}?include=state`);
      assert.equal('configuration' in unknownOnly.body[0], false);
      const page = await server().get(`${configsPath(c.id, 'rows', 'v', 'versions')}?limit=1&offset=1`);
      assert.deepEqual(
        page.body.map((v: Json) => v.version),
        [2],
      );

      const detail = await server().get(configsPath(c.id, 'rows', 'v', 'versions', '2'));
      assert.equal(detail.status, 200);
      assert.deepEqual(detail.body, list.body[1]);
      assert.equal((await server().get(configsPath(c.id, 'rows', 'v', 'versions', '9'))).status, 404);
      const badLimit = await server().get(`${configsPath(c.id, 'rows', 'v', 'versions')}?limit=many`);
      assert.equal(badLimit.status, 400);
    });

    it('rolls a row back: 201, always a new version, state kept', async () => {
      const c = await server().createConfig({ name: 'Row rollback' });
      await server().createRow(c.id, { rowId: 'rb', name: 'first', configuration: { n: 1 } });
      await server().put(configsPath(c.id, 'rows', 'rb'), { json: { name: 'second', configuration: { n: 2 } } });
      await server().put(configsPath(c.id, 'rows', 'rb', 'state'), { json: { state: { keep: true } } });

      const res = await server().post(configsPath(c.id, 'rows', 'rb', 'versions', '1', 'rollback'), { json: {} });
      assert.equal(res.status, 201);
      assert.equal(res.body.version, 3);
      assert.equal(res.body.name, 'first');
      assert.deepEqual(res.body.configuration, { n: 1 });
      assert.deepEqual(res.body.state, { keep: true });
      assert.equal(res.body.changeDescription, 'Rollback to version 1');
      const config = await version(c.id);
      assert.equal(config.version, 4);
      assert.equal(config.changeDescription, 'Row rb version 1 rollback');

      const same = await server().post(configsPath(c.id, 'rows', 'rb', 'versions', '3', 'rollback'), {
        json: { changeDescription: 'again' },
      });
      assert.equal(same.body.version, 4, 'even an identical rollback makes a version');
      assert.equal(same.body.changeDescription, 'again');
      assert.equal((await version(c.id)).changeDescription, 'again');
    });

    it('copies a row: 201, new id at version 1, empty state, into the same or another configuration', async () => {
      const source = await server().createConfig({ name: 'Source cfg', configurationId: 'src' });
      await server().createRow(source.id, { rowId: 'orig', name: 'Orig', configuration: { n: 1 }, state: { s: 1 } });
      await server().put(configsPath(source.id, 'rows', 'orig'), { json: { configuration: { n: 2 } } });

      const res = await server().post(configsPath(source.id, 'rows', 'orig', 'versions', '1', 'create'), { json: {} });
      assert.equal(res.status, 201);
      const copy = res.body;
      assert.notEqual(copy.id, 'orig');
      assert.equal(copy.version, 1);
      assert.equal(copy.name, 'Orig');
      assert.deepEqual(copy.configuration, { n: 1 });
      assert.ok(res.text.includes('"state":{}'));
      assert.equal(copy.changeDescription, 'Copied from configuration "Source cfg" (src) row orig version 1');
      const cfg = await version(source.id);
      assert.equal(cfg.version, 4);
      assert.equal(
        cfg.changeDescription,
        `Row ${copy.id} copied from configuration "Source cfg" (src) row orig version 1`,
      );
      assert.deepEqual(cfg.rows.map((r: Json) => r.id).sort(), [copy.id, 'orig'].sort());

      const target = await server().createConfig({ name: 'Target cfg' });
      const other = await server().post(configsPath(source.id, 'rows', 'orig', 'versions', '2', 'create'), {
        json: { targetConfigId: target.id, changeDescription: 'moved' },
      });
      assert.equal(other.status, 201);
      assert.deepEqual(other.body.configuration, { n: 2 });
      assert.equal(other.body.changeDescription, 'moved');
      const targetAfter = await version(target.id);
      assert.equal(targetAfter.version, 2);
      assert.equal(targetAfter.changeDescription, 'moved');
      assert.deepEqual(
        targetAfter.rows.map((r: Json) => r.id),
        [other.body.id],
      );
      assert.equal((await version(source.id)).version, 4, 'the source is untouched');
    });
  });
});
