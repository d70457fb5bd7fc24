import assert from 'node:assert/strict';
import { fromPlain } from '../../src/json/index.js';
import { COMPONENT_CIPHER_PREFIX } from '../../src/store/encryption.js';
import {
  BRANCH,
  COMPONENT,
  configsPath,
  DEPRECATED,
  describeEachBackend,
  TestServer,
  type Json,
} from '../support/storage-api-server.js';

/** Keboola's component keys in Keboola's order (docs/storage-api.md#resources, the PHP client's `Component` type). */
const COMPONENT_KEYS = [
  'id',
  'type',
  'name',
  'description',
  'longDescription',
  'version',
  'complexity',
  'categories',
  'hasUI',
  'hasRun',
  'ico32',
  'ico64',
  'ico128',
  'data',
  'flags',
  'configurationSchema',
  'configurationRowSchema',
  'emptyConfiguration',
  'emptyConfigurationRow',
  'createConfigurationRowSchema',
  'uiOptions',
  'configurationDescription',
  'features',
  'expiredOn',
  'dataTypesConfiguration',
  'processorConfiguration',
  'uri',
  'documentationUrl',
];

/** `keboola.wr-db` as the harness imports it (id, type, name, description), filled with Keboola's defaults. */
const WR_DB = {
  id: 'keboola.wr-db',
  type: 'writer',
  name: 'DB writer',
  description: 'Writes tables',
  longDescription: '',
  version: 1,
  complexity: 'medium',
  categories: [],
  hasUI: false,
  hasRun: false,
  ico32: '',
  ico64: '',
  ico128: '',
  data: {},
  flags: [],
  configurationSchema: {},
  configurationRowSchema: {},
  emptyConfiguration: {},
  emptyConfigurationRow: {},
  createConfigurationRowSchema: {},
  uiOptions: {},
  configurationDescription: null,
  features: [],
  expiredOn: null,
  dataTypesConfiguration: {},
  processorConfiguration: {},
  uri: 'https://syrup.keboola.com/docker/keboola.wr-db',
  documentationUrl: '',
};

const RICH_ID = 'keboola.ex-rich';
const RICH_PLAIN_SECRET = 'Rq8Vz2Lm-rich-component-secret';

/** A component whose registry record sets most fields itself, adds one Keboola does not know and holds a secret. */
const RICH = {
  id: RICH_ID,
  type: 'extractor',
  name: 'Rich',
  uri: 'https://runner.example.test/docker/keboola.ex-rich',
  complexity: 'hard',
  categories: ['API'],
  ico128: 'https://icons.example.test/rich-128.png',
  version: 7,
  hasUI: true,
  expiredOn: '2030-01-01T00:00:00+0000',
  features: ['dev-branch-configuration-unsafe'],
  configurationRowSchema: { type: 'object', properties: { table: { type: 'string' } } },
  emptyConfigurationRow: { parameters: { table: '' } },
  dataTypesConfiguration: { dataTypesSupport: 'authoritative' },
  processorConfiguration: { allowedProcessorPosition: 'any' },
  vendorNote: 'kept as imported',
  data: { image_parameters: { '#apiKey': RICH_PLAIN_SECRET } },
};

describeEachBackend("server: Keboola's response shapes", (backend) => {
  let server: TestServer;
  before(async () => {
    server = await TestServer.start({ backend });
    await server.backend.importComponents(fromPlain([RICH]));
    await server.createConfig({ name: 'uses wr-db' }, BRANCH, 'keboola.wr-db');
    await server.createConfig({ name: 'uses rich' }, BRANCH, RICH_ID);
    await server.createConfig({ name: 'uses gex' });
  });
  after(async () => server.close());

  /** Every response that carries component objects, each as [label, components]. */
  async function componentsEverywhere(): Promise<Array<[string, Json[]]>> {
    const found: Array<[string, Json[]]> = [];
    found.push(['index', (await server.get(DEPRECATED, { token: null })).body.components]);
    for (const prefix of [BRANCH, DEPRECATED]) {
      const list = await server.get(`${prefix}/components`);
      assert.equal(list.status, 200, list.text);
      found.push([`${prefix}/components`, list.body]);
    }
    for (const id of [COMPONENT, 'keboola.wr-db', RICH_ID]) {
      found.push([`public detail ${id}`, [(await server.get(`${DEPRECATED}/components/${id}`, { token: null })).body]]);
      found.push([`branch detail ${id}`, [(await server.get(`${BRANCH}/components/${id}`)).body]]);
    }
    return found;
  }

  describe('component objects', () => {
    it("carry every Keboola key in Keboola's order wherever they appear", async () => {
      for (const [label, components] of await componentsEverywhere()) {
        const lists = label === 'index' || label.endsWith('/components');
        // the index lists every registered component; a branch's list only those with configurations
        const registered = label === 'index' ? ['keboola.flow', 'keboola.orchestrator', 'keboola.scheduler'] : [];
        if (lists)
          assert.deepEqual(
            components.map((c) => c.id).sort(),
            [COMPONENT, RICH_ID, ...registered, 'keboola.wr-db'].sort(),
            label,
          );
        else assert.equal(components.length, 1, label);
        for (const c of components) {
          const keys = Object.keys(c).filter((k) => k !== 'configurations');
          const expected = c.id === RICH_ID ? [...COMPONENT_KEYS, 'vendorNote'] : COMPONENT_KEYS;
          assert.deepEqual(keys, expected, `${label}: ${c.id}`);
          assert.equal('configurations' in c, label.endsWith('/components'), `${label}: configurations only in lists`);
        }
      }
    });

    it("fill what an imported component lacks with Keboola's defaults", async () => {
      const detail = await server.get(`${DEPRECATED}/components/keboola.wr-db`, { token: null });
      assert.deepEqual(detail.body, WR_DB);
      for (const form of [
        '"data":{}',
        '"configurationSchema":{}',
        '"dataTypesConfiguration":{}',
        '"processorConfiguration":{}',
        '"categories":[]',
      ]) {
        assert.ok(detail.text.includes(form), `${form} (objects stay objects, lists stay lists)`);
      }
      const list = await server.get(`${BRANCH}/components`);
      const { configurations, ...listed } = list.body.find((c: Json) => c.id === 'keboola.wr-db');
      assert.deepEqual(listed, WR_DB);
      assert.deepEqual(
        configurations.map((c: Json) => c.name),
        ['uses wr-db'],
      );
    });

    it('keep every value an imported component gives, its extra keys included', async () => {
      const { body } = await server.get(`${BRANCH}/components/${RICH_ID}`);
      const { data: _data, ...given } = RICH;
      for (const [key, value] of Object.entries(given)) assert.deepEqual(body[key], value, key);
      assert.equal(body.description, '', 'a missing key still gets its default');
      assert.deepEqual(body.emptyConfiguration, {});
    });

    it("keep the components' # values as ciphers in every response", async () => {
      const everywhere = await componentsEverywhere();
      assert.equal(
        everywhere.filter(([, components]) => components.some((c) => c.id === RICH_ID)).length,
        5,
        'index, two lists, two details',
      );
      for (const [label, components] of everywhere) {
        const rich = components.find((c) => c.id === RICH_ID);
        if (!rich) continue;
        const secret = rich.data.image_parameters['#apiKey'];
        assert.ok(secret.startsWith(COMPONENT_CIPHER_PREFIX), `${label}: ${secret}`);
        assert.equal(JSON.stringify(rich).includes(RICH_PLAIN_SECRET), false, label);
      }
    });

    it('describes the built-in Generic Extractor with its own values and the defaults for the rest', async () => {
      const { body } = await server.get(`${DEPRECATED}/components/${COMPONENT}`, { token: null });
      assert.equal(body.name, 'Generic Extractor');
      assert.equal(body.hasRun, true);
      assert.equal(body.configurationSchema.type, 'object');
      assert.equal(body.documentationUrl, 'https://developers.keboola.com/extend/generic-extractor/');
      assert.equal(body.uri, 'https://syrup.keboola.com/docker/ex-generic-v2');
      assert.equal(body.ico128, '');
      assert.deepEqual(body.configurationRowSchema, {});
      assert.equal(body.expiredOn, null);
    });
  });

  describe('API index', () => {
    it("has Keboola's urlTemplates keys", async () => {
      const { body } = await server.get(DEPRECATED, { token: null });
      assert.deepEqual(body.urlTemplates, {
        orchestrationJob: '/admin/projects/{projectId}/orchestrations/{orchestrationId}/jobs/{jobId}',
      });
    });

    it('exclude=componentDetails keeps exactly the summary keys, now that every component has them', async () => {
      const { body } = await server.get(`${DEPRECATED}?exclude=componentDetails`, { token: null });
      for (const c of body.components) {
        assert.deepEqual(
          Object.keys(c),
          ['id', 'type', 'name', 'description', 'categories', 'ico64', 'ico128', 'flags', 'features'],
          c.id,
        );
      }
      const rich = body.components.find((c: Json) => c.id === RICH_ID);
      assert.deepEqual(rich.categories, ['API']);
      assert.equal(rich.ico128, RICH.ico128);
    });
  });

  describe('token verification', () => {
    it("returns Keboola's keys in order with the verified token itself, in both path forms and with a bearer token", async () => {
      const mine = await server.createToken({ description: 'mine' });
      for (const [label, request] of [
        ['deprecated', server.get(`${DEPRECATED}/tokens/verify`, { token: mine })],
        ['branch', server.get(`${BRANCH}/tokens/verify`, { token: mine })],
        [
          'bearer',
          server.get(`${DEPRECATED}/tokens/verify`, { token: null, headers: { authorization: `Bearer ${mine}` } }),
        ],
      ] as const) {
        const res = await request;
        assert.equal(res.status, 200, label);
        assert.deepEqual(
          Object.keys(res.body),
          [
            'id',
            'created',
            'refreshed',
            'description',
            'uri',
            'token',
            'isMasterToken',
            'canManageBuckets',
            'canManageTokens',
            'canReadAllFileUploads',
            'canPurgeTrash',
            'expires',
            'isExpired',
            'isDisabled',
            'bucketPermissions',
            'componentAccess',
            'organization',
            'owner',
            'gexRunner',
          ],
          label,
        );
        assert.equal(res.body.token, mine, label);
        assert.equal(res.body.description, 'mine');
        assert.equal(res.body.refreshed, res.body.created);
        assert.equal(res.body.uri, `${server.baseUrl}/v2/storage/tokens/${res.body.id}`, label);
      }
    });

    it('never shows another token: each verification carries only the token it verified', async () => {
      const first = await server.createToken({ description: 'first' });
      const second = await server.createToken({ description: 'second' });
      const other = await server.createToken({ description: 'other project', project: 'verify-beta' });
      const all = [server.token, first, second, other];
      for (const token of all) {
        const res = await server.get(`${DEPRECATED}/tokens/verify`, { token });
        assert.equal(res.body.token, token);
        for (const foreign of all.filter((t) => t !== token))
          assert.equal(res.text.includes(foreign), false, 'another token leaked');
      }
    });

    it('does not echo a refused token', async () => {
      const guess = 'guessed-token-Xy7Pq3';
      const res = await server.get(`${DEPRECATED}/tokens/verify`, { token: guess });
      assert.equal(res.status, 401);
      assert.equal(res.text.includes(guess), false);
      assert.equal(res.text.includes(server.token), false);
    });

    it('repeats only a plain Host header in uri: a hostile one leaves the path alone', async () => {
      for (const host of ['evil.test/"><script>', 'user@evil.test', 'evil.test\\x', 'a b']) {
        const res = await server.app.inject({
          method: 'GET',
          url: '/v2/storage/tokens/verify',
          headers: { host, 'x-storageapi-token': server.token },
        });
        assert.equal(res.statusCode, 200, host);
        const body = JSON.parse(res.body);
        assert.match(body.uri, /^\/v2\/storage\/tokens\/\d+$/, host);
        assert.equal(res.body.includes('evil'), false, host);
      }
      const plain = await server.app.inject({
        method: 'GET',
        url: '/v2/storage/tokens/verify',
        headers: { host: 'gex.example.test:8080', 'x-storageapi-token': server.token },
      });
      assert.match(JSON.parse(plain.body).uri, /^http:\/\/gex\.example\.test:8080\/v2\/storage\/tokens\/\d+$/);
    });
  });

  describe('read-only tokens and metadata', () => {
    it("adding metadata gets Keboola's role message, 403 accessDenied, and stores nothing", async () => {
      const config = await server.createConfig({ name: 'metadata guarded' });
      const reader = await server.createToken({ readOnly: true, description: 'metadata reader' });
      for (const options of [
        { json: { metadata: [{ key: 'KBC.x', value: 'y' }] } },
        { form: 'metadata[0][key]=KBC.x&metadata[0][value]=y' },
      ]) {
        const res = await server.post(configsPath(config.id, 'metadata'), { token: reader, ...options });
        assert.equal(res.status, 403, res.text);
        assert.equal(res.body.code, 'accessDenied');
        assert.equal(res.body.error, 'Configuration manipulation is restricted for your user role');
      }
      assert.deepEqual((await server.get(configsPath(config.id, 'metadata'))).body, []);
      const other = await server.put(configsPath(config.id), { token: reader, json: { name: 'x' } });
      assert.equal(other.body.error, "You don't have access to the resource.", 'other writes keep the newer message');
    });
  });
});
