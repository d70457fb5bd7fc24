import assert from 'node:assert/strict';
import { configsPath, describeEachBackend, useTestServer, type Json } from '../support/storage-api-server.js';

describeEachBackend('server: configuration versions, rollback and copy', (backend) => {
  const server = useTestServer({ backend });

  /** v1 create, v2 row a, v3 row b, v4 update, v5 sort order, v6 delete row a, v7 row c */
  async function history(): Promise<Json> {
    const c = await server().createConfig({
      name: 'History',
      description: 'first',
      configuration: { v: 1 },
      state: { cs: 1 },
    });
    await server().createRow(c.id, { rowId: 'a', name: 'A', configuration: { ra: 1 }, state: { as: 1 } });
    await server().createRow(c.id, { rowId: 'b', name: 'B', configuration: { rb: 1 }, state: { bs: 1 } });
    await server().put(configsPath(c.id), { json: { name: 'History 2', configuration: { v: 2 }, isDisabled: true } });
    await server().put(configsPath(c.id), { json: { rowsSortOrder: ['b', 'a'] } });
    await server().delete(configsPath(c.id, 'rows', 'a'));
    await server().createRow(c.id, { rowId: 'c', configuration: { rc: 1 } });
    await server()
      .put(configsPath(c.id, 'rows', 'a'), { json: {} })
      .then((r) => assert.equal(r.status, 404));
    return (await server().get(configsPath(c.id))).body;
  }

  it('lists versions newest first with name and description by default; include shapes items', async () => {
    const c = await history();
    assert.equal(c.version, 7);
    const list = await server().get(configsPath(c.id, 'versions'));
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((v: Json) => v.version),
      [7, 6, 5, 4, 3, 2, 1],
    );
    assert.deepEqual(
      list.body.map((v: Json) => v.changeDescription),
      [
        'Row c added',
        'Row a deleted',
        'Configuration updated',
        'Configuration updated',
        'Row b added',
        'Row a added',
        'Configuration created',
      ],
    );
    assert.deepEqual(Object.keys(list.body[0]), [
      'version',
      'created',
      'versionIdentifier',
      'creatorToken',
      'changeDescription',
      'isDeleted',
      'name',
      'description',
    ]);
    assert.equal(list.body[0].currentVersion, undefined);
    assert.equal(list.body[0].versionIdentifier, c.currentVersion.versionIdentifier);
    assert.equal(list.body[6].name, 'History');

    const none = await server().get(`${configsPath(c.id, 'versions')}?include=`);
    assert.deepEqual(Object.keys(none.body[0]), [
      'version',
      'created',
      'versionIdentifier',
      'creatorToken',
      'changeDescription',
      'isDeleted',
    ]);
    const nameState = await server().get(`${configsPath(c.id, 'versions')}?include=name,state`);
    assert.equal(nameState.body[0].name, 'History 2');
    assert.equal('description' in nameState.body[0], false);
    assert.equal('state' in nameState.body[0], false, 'state is never versioned');
    const withConfig = await server().get(`${configsPath(c.id, 'versions')}?include=configuration`);
    assert.deepEqual(withConfig.body.at(-1).configuration, { v: 1 });
    const page = await server().get(`${configsPath(c.id, 'versions')}?limit=2&offset=1`);
    assert.deepEqual(
      page.body.map((v: Json) => v.version),
      [6, 5],
    );
  });

  it('shows a version with its rows (no state), sort order and isDisabled', async () => {
    const c = await history();
    const v5 = await server().get(configsPath(c.id, 'versions', '5'));
    assert.equal(v5.status, 200);
    const body = v5.body;
    assert.equal(body.version, 5);
    assert.equal(body.name, 'History 2');
    assert.equal(body.isDisabled, true);
    assert.deepEqual(body.configuration, { v: 2 });
    assert.deepEqual(body.rowsSortOrder, ['b', 'a']);
    assert.deepEqual(
      body.rows.map((r: Json) => r.id),
      ['b', 'a'],
    );
    assert.deepEqual(body.rows[1].configuration, { ra: 1 });
    assert.equal('state' in body.rows[0], false);
    assert.equal('state' in body, false);

    const missing = await server().get(configsPath(c.id, 'versions', '99'));
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'Version 99 not found');
    const invalid = await server().get(configsPath(c.id, 'versions', 'latest'));
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.error, /Invalid version "latest"/);
  });

  it('rolls back: 201 {version}, target content, rows re-versioned, deleted rows back with their state', async () => {
    const c = await history();
    await server().put(configsPath(c.id, 'state'), { json: { state: { cs: 'current' } } });
    const res = await server().post(configsPath(c.id, 'versions', '3', 'rollback'), { json: {} });
    assert.equal(res.status, 201);
    assert.equal(res.text, '{"version":8}');

    const after = (await server().get(configsPath(c.id))).body;
    assert.equal(after.version, 8);
    assert.equal(after.changeDescription, 'Rollback to version 3');
    assert.equal(after.name, 'History');
    assert.equal(after.description, 'first');
    assert.deepEqual(after.configuration, { v: 1 });
    assert.equal(after.isDisabled, false);
    assert.deepEqual(after.rowsSortOrder, []);
    assert.equal(after.created, c.created);
    assert.deepEqual(after.creatorToken, c.creatorToken);
    assert.deepEqual(after.state, { cs: 'current' }, 'configuration state is kept');
    assert.deepEqual(
      after.rows.map((r: Json) => r.id),
      ['a', 'b'],
      'row c (not in v3) is gone, deleted row a is back',
    );
    const [a, b] = after.rows;
    assert.equal(a.version, 2);
    assert.equal(a.changeDescription, 'Rollback to version 1 (via configuration rollback to version 3)');
    assert.deepEqual(a.state, { as: 1 }, 'a recreated row gets its last state');
    assert.equal(b.version, 2, 'an untouched row still gets a new version');
    assert.deepEqual(b.state, { bs: 1 });
    assert.equal((await server().get(configsPath(c.id, 'rows', 'c'))).status, 404);

    const custom = await server().post(configsPath(c.id, 'versions', '1', 'rollback'), {
      json: { changeDescription: 'back to start' },
    });
    assert.equal(custom.body.version, 9);
    const v9 = (await server().get(configsPath(c.id))).body;
    assert.equal(v9.changeDescription, 'back to start');
    assert.deepEqual(v9.rows, []);
    assert.equal((await server().post(configsPath(c.id, 'versions', '50', 'rollback'), { json: {} })).status, 404);
  });

  it('copies a version: 201 new configuration, rows with the same ids at version 1, row states copied', async () => {
    const c = await history();
    await server().put(configsPath(c.id, 'rows', 'b', 'state'), { json: { state: { bs: 'now' } } });
    const res = await server().post(configsPath(c.id, 'versions', '5', 'create'), { json: { name: 'Copy' } });
    assert.equal(res.status, 201);
    const copy = res.body;
    assert.equal(typeof copy.id, 'string');
    assert.notEqual(copy.id, c.id);
    assert.equal(copy.version, 1);
    assert.equal(copy.name, 'Copy');
    assert.equal(copy.description, 'first', 'description of the source version');
    assert.deepEqual(copy.configuration, { v: 2 });
    assert.equal(copy.isDisabled, true);
    assert.deepEqual(copy.rowsSortOrder, ['b', 'a']);
    const text = `Copied from configuration "History 2" (${c.id}) version 5`;
    assert.equal(copy.changeDescription, text);
    assert.notEqual(copy.currentVersion.versionIdentifier, c.currentVersion.versionIdentifier);
    assert.ok(res.text.includes('"state":{}'), 'configuration state is empty');
    assert.deepEqual(
      copy.rows.map((r: Json) => [r.id, r.version, r.changeDescription]),
      [
        ['b', 1, text],
        ['a', 1, text],
      ],
    );
    assert.deepEqual(copy.rows[0].state, { bs: 'now' }, 'the current state of the source row');
    assert.deepEqual(copy.rows[1].state, { as: 1 }, 'a deleted source row gives its last state');
    assert.deepEqual((await server().get(configsPath(copy.id))).body, copy);

    const custom = await server().post(configsPath(c.id, 'versions', '1', 'create'), {
      json: { name: 'Copy 2', description: 'mine', changeDescription: 'cloned' },
    });
    assert.equal(custom.body.changeDescription, 'cloned');
    assert.equal(custom.body.description, 'mine');
    assert.deepEqual(custom.body.rows, []);
    const noName = await server().post(configsPath(c.id, 'versions', '1', 'create'), { json: {} });
    assert.equal(noName.status, 400);
    assert.match(noName.body.error, /name/);
    const source = (await server().get(configsPath(c.id))).body;
    assert.equal(source.version, 7, 'the source is untouched');
  });
});
