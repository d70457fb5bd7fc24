import assert from 'node:assert/strict';
import {
  BRANCH,
  DEPRECATED,
  describeEachBackend,
  useTestServer,
  type RequestOptions,
} from '../support/storage-api-server.js';

const CONFIGS = `${BRANCH}/components/ex-generic-v2/configs`;
const N = '%00';
const NUL = '\u0000';

/**
 * A NUL byte in a path segment, a query parameter or a body value of any route: PostgreSQL's text
 * cannot hold one, so there the database failed the statement and the server answered 500. Now
 * nothing answers 500: on PostgreSQL the request is refused (400) or finds nothing (404) and
 * changes nothing; SQLite, which can hold NUL, stores such a value as before.
 */
describeEachBackend('server: a NUL byte in any input', (backend) => {
  const server = useTestServer({ backend });

  it('is never answered with 500; on PostgreSQL with 4xx, changing nothing', async () => {
    assert.equal((await server().post(CONFIGS, { json: { name: 'kept', configurationId: 'c1' } })).status, 201);
    assert.equal((await server().post(`${CONFIGS}/c1/rows`, { json: { name: 'kept', rowId: 'r1' } })).status, 201);
    const before = (await server().get(`${CONFIGS}/c1`)).body;
    const probes: Array<[string, string, RequestOptions?]> = [
      ['GET', `${CONFIGS}/a${N}b`],
      ['GET', `${BRANCH}/components/ex${N}/configs`],
      ['GET', `${BRANCH}/components/ex${N}`],
      ['GET', `${DEPRECATED}/components/ex${N}`],
      ['GET', `${CONFIGS}/c1/rows/r${N}`],
      ['DELETE', `${CONFIGS}/a${N}b`],
      ['POST', CONFIGS, { json: { name: `x${NUL}y`, description: NUL, configuration: { a: NUL } } }],
      ['PUT', `${CONFIGS}/c1`, { json: { name: NUL, state: { a: NUL } } }],
      ['PUT', `${CONFIGS}/c1/rows/r1`, { json: { name: `x${NUL}`, configuration: { b: NUL } } }],
      ['POST', `${CONFIGS}/c1/metadata`, { json: { metadata: [{ key: `k${NUL}`, value: `v${NUL}` }] } }],
      ['POST', `${CONFIGS}/c1/metadata`, { form: 'metadata[0][key]=k%00&metadata[0][value]=v%00' }],
      ['POST', `${DEPRECATED}/buckets`, { json: { name: 'nul', description: `d${NUL}` } }],
      ['GET', `${DEPRECATED}/buckets/in.c-a${N}`],
    ];
    let refused = 0;
    for (const [method, path, options] of probes) {
      const res = await server().request(method, path, options);
      const what = `${method} ${path} ${JSON.stringify(options ?? '')}: ${res.status} ${res.text}`;
      assert.ok(res.status < 500, what);
      if (backend.name !== 'PostgreSQL') continue;
      assert.ok(res.status >= 400, what);
      assert.equal(res.body?.status, 'error');
      if (res.body.code !== 'storage.validation') continue;
      assert.match(res.body.error, /contains a NUL character \(byte 0\), which the store's database cannot hold/);
      refused++;
    }
    if (backend.name === 'PostgreSQL') {
      assert.ok(refused >= 5, `the writes were refused with the NUL message (${refused})`);
      // every write above was refused as a whole: the configuration is as it was, no bucket was made
      assert.deepEqual((await server().get(`${CONFIGS}/c1`)).body, before);
      assert.equal((await server().get(`${DEPRECATED}/buckets/in.c-nul`)).status, 404);
    }
  });
});
