import assert from 'node:assert/strict';
import { openEmbeddedStore } from '../support/open-store.js';
import { fromPlain } from '../../src/json/index.js';
import { TEST_KEY } from '../support/store.js';
import { COMPONENT, configsPath, describeEachBackend, useTestServer } from '../support/storage-api-server.js';

/** GET bodies are reused while the store is unchanged: every kind of write must show up in the next read. */
describeEachBackend('server: reads after writes (read cache)', (backend) => {
  const server = useTestServer({ backend });

  it('a write through the API shows in the next detail, list and rows read', async () => {
    const c = await server().createConfig({ name: 'cached', configuration: { a: 1 } });
    const row = await server().createRow(c.id, { name: 'r1' });
    for (let i = 0; i < 2; i++) await server().get(configsPath(c.id)); // warm
    await server().put(configsPath(c.id, 'state'), { json: { state: { cursor: 5 } } });
    assert.deepEqual(
      (await server().get(configsPath(c.id))).body.state,
      { cursor: 5 },
      'state update (no new version)',
    );
    await server().put(configsPath(c.id, 'rows', row.id), { json: { name: 'renamed' } });
    assert.equal((await server().get(configsPath(c.id))).body.rows[0].name, 'renamed');
    assert.equal((await server().get(configsPath(c.id, 'rows'))).body[0].name, 'renamed');
    assert.equal((await server().get(configsPath(c.id, 'rows', row.id))).body.name, 'renamed');
    await server().delete(configsPath(c.id));
    assert.equal((await server().get(configsPath(c.id))).status, 404);
    assert.ok(
      !(await server().get(configsPath())).body.some((x: { id: string }) => x.id === c.id),
      'gone from the list',
    );
  });

  it('a write by another connection to the same store (another process) shows in the next read', async () => {
    const c = await server().createConfig({ name: 'shared', configuration: { a: 1 } });
    assert.deepEqual((await server().get(configsPath(c.id))).body.configuration, { a: 1 });
    assert.deepEqual((await server().get(configsPath(c.id))).body.configuration, { a: 1 });
    const other = await openEmbeddedStore(server().location, TEST_KEY);
    try {
      const store = await other.localSession('alpha');
      await store.updateConfiguration(COMPONENT, c.id, { configuration: fromPlain({ a: 2 }) });
    } finally {
      await other.close();
    }
    const after = (await server().get(configsPath(c.id))).body;
    assert.deepEqual(after.configuration, { a: 2 });
    assert.equal(after.version, 2);
  });

  it('keeps tokens apart: a token of another project gets its 404, not a cached body', async () => {
    const c = await server().createConfig({ name: 'alpha only' });
    assert.equal((await server().get(configsPath(c.id))).status, 200);
    const beta = await server().createToken({ project: 'beta' });
    assert.equal((await server().get(configsPath(c.id), { token: beta })).status, 404);
  });
});
