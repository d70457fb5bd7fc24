import assert from 'node:assert/strict';
import { configsPath, describeEachBackend, useTestServer, type Json } from '../support/storage-api-server.js';

describeEachBackend('server: configuration metadata', (backend) => {
  const server = useTestServer({ backend });

  it('adds (201, whole list), overwrites by key, lists, deletes (204) — without versions', async () => {
    const c = await server().createConfig({ name: 'Meta' });
    const res = await server().post(configsPath(c.id, 'metadata'), {
      json: {
        metadata: [
          { key: 'KBC.owner', value: 'ann' },
          { key: 'color', value: 'red' },
        ],
      },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(
      res.body.map((m: Json) => [m.key, m.value]),
      [
        ['KBC.owner', 'ann'],
        ['color', 'red'],
      ],
    );
    for (const m of res.body) {
      assert.equal(typeof m.id, 'string');
      assert.equal(typeof m.timestamp, 'string');
    }

    const overwrite = await server().post(configsPath(c.id, 'metadata'), {
      form: 'metadata[0][key]=color&metadata[0][value]=blue',
    });
    assert.equal(overwrite.status, 201);
    assert.deepEqual(overwrite.body.map((m: Json) => [m.key, m.value]).sort(), [
      ['KBC.owner', 'ann'],
      ['color', 'blue'],
    ]);

    const list = await server().get(configsPath(c.id, 'metadata'));
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 2);
    const color = list.body.find((m: Json) => m.key === 'color');
    assert.equal((await server().get(configsPath(c.id))).body.version, 1, 'metadata is not versioned');

    const del = await server().delete(configsPath(c.id, 'metadata', color.id));
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assert.deepEqual(
      (await server().get(configsPath(c.id, 'metadata'))).body.map((m: Json) => m.key),
      ['KBC.owner'],
    );
    const again = await server().delete(configsPath(c.id, 'metadata', color.id));
    assert.equal(again.status, 404);
    assert.match(again.body.error, /Metadata with id/);
  });

  it('refuses a missing or empty list and unknown or deleted configurations', async () => {
    const c = await server().createConfig({ name: 'Meta rules' });
    const missing = await server().post(configsPath(c.id, 'metadata'), { json: {} });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error, /metadata: This field is missing/);
    const empty = await server().post(configsPath(c.id, 'metadata'), { json: { metadata: [] } });
    assert.equal(empty.status, 400);
    const blankKey = await server().post(configsPath(c.id, 'metadata'), {
      json: { metadata: [{ key: '', value: 'x' }] },
    });
    assert.equal(blankKey.status, 400);
    assert.match(blankKey.body.error, /metadata\[0\]\[key\]/);
    assert.equal((await server().get(configsPath('no-such', 'metadata'))).status, 404);

    await server().post(configsPath(c.id, 'metadata'), { json: { metadata: [{ key: 'k', value: 'v' }] } });
    await server().delete(configsPath(c.id));
    const onDeleted = await server().get(configsPath(c.id, 'metadata'));
    assert.equal(onDeleted.status, 404);
    assert.equal(onDeleted.body.error, `Configuration ${c.id} not found`);
    await server().post(configsPath(c.id, 'restore'));
    assert.deepEqual(
      (await server().get(configsPath(c.id, 'metadata'))).body.map((m: Json) => m.key),
      ['k'],
      'back after restore',
    );
  });
  it("bounds a configuration's metadata as Storage metadata is bounded: key and value length, items per call and per configuration", async () => {
    const c = await server().createConfig({ name: 'Bounded' });
    const post = (metadata: unknown) => server().post(configsPath(c.id, 'metadata'), { json: { metadata } });
    const refused = async (metadata: unknown, field: RegExp) => {
      const res = await post(metadata);
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.error, field);
    };
    await refused(
      [{ key: 'k'.repeat(256), value: 'v' }],
      /^Invalid parameters - metadata\[0\]\[key\]: This value is too long \(256 characters\)/,
    );
    await refused(
      [
        { key: 'k', value: 'v' },
        { key: 'big', value: '€'.repeat(21_846) },
      ],
      /metadata\[1\]\[value\]: This value is too long \(65538 bytes\)/,
    );
    await refused(
      Array.from({ length: 10_001 }, (_, i) => ({ key: `k${i}`, value: '' })),
      /metadata: 10001 items, more than the 10000/,
    );
    const many = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i}`, value: 'v' }));
    assert.equal((await post(many(1000, 'a'))).status, 201);
    await refused(many(1, 'b'), /would hold 1001 metadata items, more than the 1000.*Nothing was changed/);
    const list = await server().get(configsPath(c.id, 'metadata'));
    assert.equal(list.body.length, 1000);
    assert.equal((await post(many(5, 'a'))).status, 201, 'setting known keys again does not grow it');
  });
});
