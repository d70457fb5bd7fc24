import assert from 'node:assert/strict';
import { configsPath, describeEachBackend, useTestServer, type Json } from '../support/storage-api-server.js';

describeEachBackend('server: concurrent updates', (backend) => {
  const server = useTestServer({ backend });

  it('20 parallel PUTs of one configuration make 20 consecutive versions and lose nothing', async () => {
    const c = await server().createConfig({ name: 'Busy', configuration: { n: -1 } });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        server().put(configsPath(c.id), { json: { configuration: { n: i }, changeDescription: `update ${i}` } }),
      ),
    );
    for (const res of responses) assert.equal(res.status, 200, res.text);
    const versions = responses.map((r) => r.body.version).sort((a: number, b: number) => a - b);
    assert.deepEqual(
      versions,
      Array.from({ length: 20 }, (_, i) => i + 2),
      'distinct consecutive versions 2..21',
    );

    const list = await server().get(`${configsPath(c.id, 'versions')}?include=configuration`);
    assert.equal(list.body.length, 21);
    const byText = new Map(list.body.map((v: Json) => [v.changeDescription, v]));
    responses.forEach((res, i) => {
      const v: Json = byText.get(`update ${i}`);
      assert.ok(v, `update ${i} is in the version list`);
      assert.equal(v.version, res.body.version);
      assert.deepEqual(v.configuration, { n: i });
    });
    const identifiers = new Set(list.body.map((v: Json) => v.versionIdentifier));
    assert.equal(identifiers.size, 21);
    const latest = list.body[0];
    assert.equal(latest.version, 21);
    assert.deepEqual((await server().get(configsPath(c.id))).body.configuration, latest.configuration);
  });
});
