import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fromPlain, toPlain } from '../../src/json/index.js';
import { CIPHER_PREFIX, COMPONENT_CIPHER_PREFIX } from '../../src/store/encryption.js';
import { BRANCH, DEPRECATED, describeEachBackend, TestServer } from '../support/storage-api-server.js';

const PLAIN = 'Cm9Tz4Hq-registry-secret/"é';
const DEEP = 'Dp3Wn6Rk-deep-secret';
const ID = 'keboola.ex-secretive';

function component() {
  return fromPlain([
    {
      id: ID,
      type: 'extractor',
      name: 'Secretive',
      data: {
        image_parameters: { '#secret': PLAIN, nested: { '#deep': DEEP, list: [{ '#item': DEEP }] }, plain: 'visible' },
      },
    },
  ]);
}

describeEachBackend('component registry secrets', (backend) => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ backend });
    await server.backend.importComponents(component());
    await server.createConfig({ name: 'uses it' }, BRANCH, ID);
  });
  after(async () => server.close());

  const leaks = (text: string) =>
    [PLAIN, DEEP, JSON.stringify(PLAIN).slice(1, -1), 'Cm9Tz4Hq', 'Dp3Wn6Rk'].filter((form) => text.includes(form));

  it('stores # values of an imported component encrypted for the component: the rows never hold the plaintext', async () => {
    const rows = await server.backend.db.all<{ definition: string }>('SELECT definition FROM components WHERE id = ?', [
      ID,
    ]);
    assert.equal(rows.length, 1);
    assert.deepEqual(leaks(rows[0].definition), []);
    const stored = JSON.parse(rows[0].definition);
    assert.ok(stored.data.image_parameters['#secret'].startsWith(COMPONENT_CIPHER_PREFIX));
    assert.ok(stored.data.image_parameters.nested.list[0]['#item'].startsWith(COMPONENT_CIPHER_PREFIX));
    assert.equal(stored.data.image_parameters.plain, 'visible');
  });

  it('the database file itself holds no plaintext (SQLite bytes, WAL included)', async () => {
    if (backend.name !== 'SQLite') {
      // PostgreSQL: the row text as the server returns it
      const rows = await server.backend.db.all<{ definition: string }>(
        'SELECT definition::text AS definition FROM components',
      );
      assert.deepEqual(leaks(rows.map((r) => r.definition).join('\n')), []);
      return;
    }
    for (const file of [server.location, `${server.location}-wal`]) {
      if (!existsSync(file)) continue;
      const bytes = await readFile(file);
      assert.deepEqual(leaks(bytes.toString('latin1')).concat(leaks(bytes.toString('utf8'))), [], file);
    }
  });

  it('HTTP responses carry only ciphers: index (public), public detail, detail and list with a token', async () => {
    const responses = [
      await server.get(DEPRECATED, { token: null }),
      await server.get(`${DEPRECATED}/components/${ID}`, { token: null }),
      await server.get(`${BRANCH}/components/${ID}`),
      await server.get(`${BRANCH}/components`),
      await server.get(`${DEPRECATED}/components`),
    ];
    for (const res of responses) {
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(leaks(res.text), [], res.text.slice(0, 200));
    }
    const detail = responses[2].body;
    assert.ok(detail.data.image_parameters['#secret'].startsWith(COMPONENT_CIPHER_PREFIX));
    assert.ok(
      responses[3].body.some((c: { id: string }) => c.id === ID),
      'listed with its configuration',
    );
  });

  it('decrypts for the runner only, in memory; a re-import of the same secret keeps its cipher', async () => {
    const before = (await server.backend.getComponent(ID))!.definition;
    await server.backend.importComponents(component());
    const after = (await server.backend.getComponent(ID))!.definition;
    assert.deepEqual(toPlain(after), toPlain(before));
    const params = (toPlain(after) as { data: { image_parameters: object } }).data.image_parameters;
    const plain = toPlain(server.backend.decryptComponentSecrets(ID, fromPlain(params))) as {
      '#secret': string;
      nested: { '#deep': string };
    };
    assert.equal(plain['#secret'], PLAIN);
    assert.equal(plain.nested['#deep'], DEEP);
  });

  it('a component cipher is not decrypted as a configuration secret, nor under another component', async () => {
    const params = (
      toPlain((await server.backend.getComponent(ID))!.definition) as {
        data: { image_parameters: { '#secret': string } };
      }
    ).data.image_parameters;
    const copied = fromPlain({ '#x': params['#secret'] });
    assert.deepEqual(
      toPlain(server.backend.decryptSecrets(1, ID, copied)),
      { '#x': params['#secret'] },
      'left as a cipher',
    );
    assert.throws(
      () => server.backend.decryptComponentSecrets('other-component', copied),
      /another project or component/,
    );
    assert.ok(!params['#secret'].startsWith(CIPHER_PREFIX));
  });
});
