import assert from 'node:assert/strict';
import nock from 'nock';
import { ApplicationError } from '../../../src/common/errors.js';
import { fromPlain, stringifyExact } from '../../../src/json/index.js';
import { HttpConfigStore } from '../../../src/store/remote/http-config-store.js';
import { StoreError } from '../../../src/store/store-error.js';

const URL = 'http://storage.test';
const CONFIG = {
  id: 'main-1',
  name: 'Main',
  description: '',
  created: '2026-01-01T00:00:00+0000',
  creatorToken: { id: 7, description: 't' },
  version: 3,
  changeDescription: 'x',
  isDisabled: false,
  isDeleted: false,
  configuration: { a: [], b: {} },
  rowsSortOrder: [],
  rows: [],
  state: {},
  currentVersion: {
    created: '2026-01-01T00:00:00+0000',
    creatorToken: { id: 7, description: 't' },
    changeDescription: 'x',
    versionIdentifier: '01ABC',
  },
};

describe('HTTP config store client (nock)', () => {
  const client = () => new HttpConfigStore({ url: `${URL}/`, token: 'tok-1', retryBaseMs: 1, maxRetries: 3 });
  afterEach(() => nock.cleanAll());

  it('sends the token and the branch path, and reads the configuration exactly', async () => {
    nock(URL, { reqheaders: { 'x-storageapi-token': 'tok-1' } })
      .get('/v2/storage/branch/default/components/ex-generic-v2/configs/main-1')
      .reply(200, JSON.stringify(CONFIG), { 'Content-Type': 'application/json' });
    const c = await client().getConfiguration('ex-generic-v2', 'main-1');
    assert.equal(c.version, 3);
    assert.equal(stringifyExact(c.configuration), '{"a":[],"b":{}}');
  });

  it('sends only the given update fields as exact JSON', async () => {
    let sent = '';
    nock(URL)
      .put('/v2/storage/branch/default/components/ex-generic-v2/configs/main-1', (b) => {
        sent = JSON.stringify(b);
        return true;
      })
      .reply(200, JSON.stringify(CONFIG));
    await client().updateConfiguration('ex-generic-v2', 'main-1', {
      configuration: fromPlain({ x: {} }),
      rowsSortOrder: ['b', 'a'],
    });
    assert.equal(sent, '{"configuration":{"x":{}},"rowsSortOrder":["b","a"]}');
  });

  it('retries 5xx and 409 version conflicts, then succeeds', async () => {
    nock(URL)
      .put('/v2/storage/branch/default/components/c/configs/1/state')
      .reply(503, { error: 'busy', code: 'x' })
      .put('/v2/storage/branch/default/components/c/configs/1/state')
      .reply(409, { error: 'conflict', code: 'storage.components.configurations.versionConflict' })
      .put('/v2/storage/branch/default/components/c/configs/1/state')
      .reply(200, JSON.stringify(CONFIG));
    const c = await client().updateConfigurationState('c', '1', fromPlain({}));
    assert.equal(c.id, 'main-1');
  });

  it('does not retry 4xx; the error carries status and code', async () => {
    const scope = nock(URL)
      .get('/v2/storage/branch/default/components/c/configs/x')
      .reply(404, { error: 'Configuration x not found', code: 'notFound', status: 'error' });
    await assert.rejects(client().getConfiguration('c', 'x'), (e: unknown) => {
      assert.ok(e instanceof StoreError);
      assert.equal(e.status, 404);
      assert.equal(e.code, 'notFound');
      assert.equal(e.message, 'Configuration x not found');
      assert.equal(e.gexCode, 'GEX_STORE_NOT_FOUND', "Keboola's server says no gexCode: the status gives it");
      return true;
    });
    assert.ok(scope.isDone());
  });

  it("keeps a gex server's gexCode when it is a user error of the catalogue, and only then", async () => {
    const path = '/v2/storage/branch/default/components/c/configs/x';
    const body = { error: 'Table t not found', code: 'storage.tables.notFound', status: 'error' };
    nock(URL)
      .get(path)
      .reply(404, { ...body, gexCode: 'GEX_TABLE_NOT_FOUND' });
    await assert.rejects(
      client().getConfiguration('c', 'x'),
      (e: unknown) => e instanceof StoreError && e.gexCode === 'GEX_TABLE_NOT_FOUND',
    );
    for (const gexCode of ['GEX_INTERNAL', 'GEX_NO_SUCH_CODE', 42, 'constructor']) {
      nock(URL)
        .get(path)
        .reply(404, { ...body, gexCode });
      await assert.rejects(
        client().getConfiguration('c', 'x'),
        (e: unknown) => e instanceof StoreError && e.gexCode === 'GEX_STORE_NOT_FOUND',
        String(gexCode),
      );
    }
  });

  it('gives up after the retries with an application error', async () => {
    nock(URL).get('/v2/storage/tokens/verify').times(4).reply(500, { error: 'down' });
    await assert.rejects(
      client().verifyToken(),
      (e: unknown) => e instanceof ApplicationError && /\[500\] down/.test(e.message),
    );
  });

  it('maps token verification to the token identity', async () => {
    nock(URL)
      .get('/v2/storage/tokens/verify')
      .reply(200, {
        id: '44',
        description: 'ci',
        canManageBuckets: true,
        isMasterToken: false,
        owner: { id: '9', name: 'proj' },
        created: 'c',
      });
    assert.deepEqual(await client().verifyToken(), {
      id: 44,
      description: 'ci',
      projectId: 9,
      projectName: 'proj',
      readOnly: false,
      canManageTokens: false,
      runner: false,
      created: 'c',
    });
    nock(URL)
      .get('/v2/storage/tokens/verify')
      .reply(200, {
        id: '1',
        description: 'admin',
        canManageBuckets: true,
        canManageTokens: true,
        isMasterToken: true,
        owner: { id: '9', name: 'proj' },
        created: 'c',
      });
    assert.equal((await client().verifyToken()).canManageTokens, true);
    nock(URL)
      .get('/v2/storage/tokens/verify')
      .reply(200, { id: '2', canManageBuckets: true, gexRunner: true, owner: { id: '9', name: 'proj' } });
    assert.equal((await client().verifyToken()).runner, true, "a gex server's runner token");
    nock(URL)
      .get('/v2/storage/tokens/verify')
      .reply(200, { id: '3', canManageBuckets: true, gexRunner: 'true', owner: { id: '9', name: 'proj' } });
    assert.equal((await client().verifyToken()).runner, false, 'only a JSON true says so');
  });
});
