import assert from 'node:assert/strict';
import {
  BRANCH,
  COMPONENT,
  configsPath,
  DEPRECATED,
  describeEachBackend,
  useTestServer,
} from '../support/storage-api-server.js';

describeEachBackend('server: tokens, index, branches, routing', (backend) => {
  const server = useTestServer({ backend });

  describe('authentication', () => {
    it('refuses a request without a token: 401, empty code, Keboola error body plus gexCode, exact JSON content type', async () => {
      const res = await server().get(`${BRANCH}/components`, { token: null });
      assert.equal(res.status, 401);
      assert.equal(res.contentType, 'application/json');
      assert.deepEqual(Object.keys(res.body), ['error', 'code', 'status', 'exceptionId', 'gexCode']);
      assert.equal(res.body.error, 'Access token must be set');
      assert.equal(res.body.code, '');
      assert.equal(res.body.status, 'error');
      assert.match(res.body.exceptionId, /^exception-[0-9a-f]{32}$/);
      assert.equal(res.body.gexCode, 'GEX_STORE_TOKEN_INVALID');
    });

    it('treats an empty token header as missing', async () => {
      const res = await server().get(`${BRANCH}/components`, { token: '' });
      assert.equal(res.status, 401);
      assert.equal(res.body.error, 'Access token must be set');
    });

    it('refuses an unknown token with storage.tokenInvalid', async () => {
      const res = await server().get(`${BRANCH}/components`, { token: 'no-such-token' });
      assert.equal(res.status, 401);
      assert.equal(res.body.error, 'Invalid access token');
      assert.equal(res.body.code, 'storage.tokenInvalid');
    });

    it('accepts the header in any letter case and Authorization: Bearer', async () => {
      for (const name of ['x-storageapi-token', 'X-StorageAPI-Token']) {
        const res = await server().get(`${DEPRECATED}/tokens/verify`, {
          token: null,
          headers: { [name]: server().token },
        });
        assert.equal(res.status, 200, name);
      }
      const bearer = await server().get(`${DEPRECATED}/tokens/verify`, {
        token: null,
        headers: { authorization: `Bearer ${server().token}` },
      });
      assert.equal(bearer.status, 200);
      const wrongBearer = await server().get(`${DEPRECATED}/tokens/verify`, {
        token: null,
        headers: { authorization: 'Bearer nope' },
      });
      assert.equal(wrongBearer.status, 401);
      assert.equal(wrongBearer.body.code, 'storage.tokenInvalid');
    });
  });

  describe('token verification', () => {
    it('returns the token subset in both path forms', async () => {
      const readOnly = await server().createToken({ description: 'reader', readOnly: true });
      const res = await server().get(`${DEPRECATED}/tokens/verify`, { token: readOnly });
      assert.equal(res.status, 200);
      const t = res.body;
      assert.equal(typeof t.id, 'string');
      assert.match(t.id, /^\d+$/);
      assert.equal(t.description, 'reader');
      assert.match(t.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}$/);
      assert.equal(t.isMasterToken, false);
      assert.equal(t.canManageBuckets, false);
      assert.equal(t.canManageTokens, false);
      assert.equal(t.canReadAllFileUploads, false);
      assert.equal(t.canPurgeTrash, false);
      assert.equal(t.expires, null);
      assert.equal(t.isExpired, false);
      assert.equal(t.isDisabled, false);
      assert.deepEqual(t.componentAccess, []);
      assert.equal(res.text.includes('"bucketPermissions":{}'), true, 'bucketPermissions is an empty object');
      assert.deepEqual(t.organization, { id: '1' });
      assert.equal(typeof t.owner.id, 'string');
      assert.equal(t.owner.name, 'alpha');

      const branch = await server().get(`${BRANCH}/tokens/verify`);
      assert.equal(branch.status, 200);
      assert.equal(branch.body.canManageBuckets, true);
      assert.equal(branch.body.description, 'alpha admin');
      assert.equal(branch.body.owner.id, t.owner.id, 'same project');
      assert.notEqual(branch.body.id, t.id);
    });
  });

  describe('API index', () => {
    it("is public, as Keboola's: no token needed, and an unknown one does not matter", async () => {
      const res = await server().get('/v2/storage', { token: null });
      assert.equal(res.status, 200);
      assert.equal(res.body.api, 'storage');
      assert.ok(res.body.components.some((c: { id: string }) => c.id === 'ex-generic-v2'));
      assert.equal((await server().get('/v2/storage', { token: 'no-such-token' })).status, 200);
    });

    it('lists components inside a project only with a token', async () => {
      for (const url of [
        '/v2/storage/components',
        '/v2/storage/branch/default/components',
        '/v2/storage/branch/default/components/ex-generic-v2',
      ]) {
        assert.equal((await server().get(url, { token: null })).status, 401, url);
        assert.equal((await server().get(url, { token: 'no-such-token' })).status, 401, url);
      }
      assert.equal(
        (await server().get('/v2/storage/components/ex-generic-v2', { token: null })).status,
        200,
        'the public detail',
      );
    });

    it('lists the API, its revision and every registered component', async () => {
      for (const url of ['/v2/storage', '/v2/storage/']) {
        const res = await server().get(url);
        assert.equal(res.status, 200, url);
        assert.equal(res.body.api, 'storage');
        assert.equal(res.body.version, 'v2');
        assert.match(res.body.revision, /^gex-\d+\.\d+\.\d+/);
        assert.equal(typeof res.body.host, 'string');
        assert.match(res.body.documentation, /^https:\/\//);
        // the Job Queue, Scheduler and Notification APIs, at the server's origin
        assert.deepEqual(
          res.body.services.map((s: { id: string }) => s.id),
          ['queue', 'scheduler', 'notification'],
        );
        for (const service of res.body.services) assert.match(service.url, /^http:\/\/(127\.0\.0\.1|localhost):\d+$/);
        assert.deepEqual(res.body.features, []);
        assert.deepEqual(res.body.urlTemplates, {
          orchestrationJob: '/admin/projects/{projectId}/orchestrations/{orchestrationId}/jobs/{jobId}',
        });
        const ids = res.body.components.map((c: { id: string }) => c.id).sort();
        assert.deepEqual(ids, [
          COMPONENT,
          'keboola.flow',
          'keboola.orchestrator',
          'keboola.scheduler',
          'keboola.wr-db',
        ]);
        const gex = res.body.components.find((c: { id: string }) => c.id === COMPONENT);
        assert.ok(gex.data && gex.configurationSchema, 'full component details');
      }
    });

    it('drops components or their details on request', async () => {
      const none = await server().get('/v2/storage?exclude=components');
      assert.equal(none.status, 200);
      assert.equal('components' in none.body, false);

      const brief = await server().get('/v2/storage?exclude=componentDetails');
      const allowed = ['id', 'name', 'type', 'ico64', 'ico128', 'features', 'flags', 'description', 'categories'];
      for (const c of brief.body.components) {
        for (const key of Object.keys(c)) assert.ok(allowed.includes(key), `unexpected key ${key}`);
        assert.ok(c.id && c.type && c.name);
      }
      const both = await server().get('/v2/storage?exclude=components,componentDetails');
      assert.equal('components' in both.body, false);
    });
  });

  describe('components', () => {
    it('serves the component detail publicly without a token (deprecated path only)', async () => {
      const res = await server().get(`/v2/storage/components/${COMPONENT}`, { token: null });
      assert.equal(res.status, 200);
      assert.equal(res.body.id, COMPONENT);
      assert.equal(res.body.type, 'extractor');
      assert.equal('configurations' in res.body, false);

      const branchWithout = await server().get(`${BRANCH}/components/${COMPONENT}`, { token: null });
      assert.equal(branchWithout.status, 401);
      const branchWith = await server().get(`${BRANCH}/components/${COMPONENT}`);
      assert.equal(branchWith.status, 200);
      assert.deepEqual(branchWith.body, res.body);
    });

    it('answers 404 for an unknown component', async () => {
      const pub = await server().get('/v2/storage/components/keboola.nothing', { token: null });
      assert.equal(pub.status, 404);
      assert.equal(pub.body.code, 'notFound');
      assert.match(pub.body.error, /keboola\.nothing/);
      const list = await server().get(`${BRANCH}/components/keboola.nothing/configs`);
      assert.equal(list.status, 404);
    });
  });

  describe('branches', () => {
    it('lists only the default branch', async () => {
      for (const url of ['/v2/storage/dev-branches', '/v2/storage/dev-branches/']) {
        const res = await server().get(url);
        assert.equal(res.status, 200);
        assert.equal(res.body.length, 1);
        assert.equal(res.body[0].id, 1);
        assert.equal(res.body[0].name, 'Main');
        assert.equal(res.body[0].isDefault, true);
      }
    });

    it('addresses the default branch as "default" and as 1; other branches are 404', async () => {
      const config = await server().createConfig({ name: 'Branch check' });
      const byName = await server().get(`/v2/storage/branch/default/components/${COMPONENT}/configs/${config.id}`);
      const byId = await server().get(`/v2/storage/branch/1/components/${COMPONENT}/configs/${config.id}`);
      assert.equal(byName.status, 200);
      assert.deepEqual(byId.body, byName.body);
      const other = await server().get(`/v2/storage/branch/2/components/${COMPONENT}/configs/${config.id}`);
      assert.equal(other.status, 404);
      assert.equal(other.body.code, 'notFound');
      assert.match(other.body.error, /Branch 2 not found.*branch\/default/);
    });
  });

  describe('routing', () => {
    it('answers unknown routes with a JSON 404', async () => {
      const res = await server().get('/v2/storage/no-such-thing');
      assert.equal(res.status, 404);
      assert.equal(res.contentType, 'application/json');
      assert.equal(res.body.code, 'notFound');
      assert.match(res.body.error, /GET \/v2\/storage\/no-such-thing/);
    });

    it('has configuration metadata only in the branch form', async () => {
      const config = await server().createConfig({ name: 'Metadata form' });
      const deprecated = await server().get(`${DEPRECATED}/components/${COMPONENT}/configs/${config.id}/metadata`);
      assert.equal(deprecated.status, 404);
      const branch = await server().get(`${BRANCH}/components/${COMPONENT}/configs/${config.id}/metadata`);
      assert.equal(branch.status, 200);
    });

    it('refuses PUT without an id in the URL with 400', async () => {
      const noConfig = await server().put(`${BRANCH}/components/${COMPONENT}/configs`, { json: { name: 'x' } });
      assert.equal(noConfig.status, 400);
      assert.match(noConfig.body.error, /configuration id is missing/);
      const config = await server().createConfig({ name: 'Row id check' });
      const noRow = await server().put(configsPath(config.id, 'rows'), { json: { name: 'x' } });
      assert.equal(noRow.status, 400);
      assert.match(noRow.body.error, /row id is missing/);
    });

    it('answers reset-to-default (dev branches only) with 501', async () => {
      const config = await server().createConfig({ name: 'Reset' });
      const res = await server().post(configsPath(config.id, 'reset-to-default'));
      assert.equal(res.status, 501);
      assert.match(res.body.error, /not implemented for default branch/);
    });
  });

  describe('read-only tokens', () => {
    it('may read everything but every write is 403 accessDenied', async () => {
      const config = await server().createConfig({ name: 'Guarded', configuration: { a: 1 } });
      const row = await server().createRow(config.id, { name: 'r' });
      const reader = await server().createToken({ readOnly: true });
      const reads = [
        `${BRANCH}/components`,
        configsPath(),
        configsPath(config.id),
        configsPath(config.id, 'versions'),
        configsPath(config.id, 'versions', '1'),
        configsPath(config.id, 'rows'),
        configsPath(config.id, 'rows', row.id),
        configsPath(config.id, 'rows', row.id, 'versions'),
        configsPath(config.id, 'metadata'),
      ];
      for (const url of reads) assert.equal((await server().get(url, { token: reader })).status, 200, url);

      const writes: Array<[string, string, unknown]> = [
        ['POST', configsPath(), { name: 'new' }],
        ['PUT', configsPath(config.id), { name: 'changed' }],
        ['PUT', configsPath(config.id, 'state'), { state: { a: 1 } }],
        ['DELETE', configsPath(config.id), undefined],
        ['POST', configsPath(config.id, 'restore'), {}],
        ['POST', configsPath(config.id, 'versions', '1', 'rollback'), {}],
        ['POST', configsPath(config.id, 'versions', '1', 'create'), { name: 'copy' }],
        ['POST', configsPath(config.id, 'rows'), { name: 'r2' }],
        ['PUT', configsPath(config.id, 'rows', row.id), { name: 'r2' }],
        ['PUT', configsPath(config.id, 'rows', row.id, 'state'), { state: {} }],
        ['DELETE', configsPath(config.id, 'rows', row.id), undefined],
        ['POST', configsPath(config.id, 'rows', row.id, 'versions', '1', 'rollback'), {}],
        ['POST', configsPath(config.id, 'rows', row.id, 'versions', '1', 'create'), {}],
        ['POST', configsPath(config.id, 'metadata'), { metadata: [{ key: 'k', value: 'v' }] }],
        ['DELETE', configsPath(config.id, 'metadata', '1'), undefined],
      ];
      for (const [method, url, json] of writes) {
        const res = await server().request(method, url, { token: reader, json });
        assert.equal(res.status, 403, `${method} ${url}: ${res.text}`);
        assert.equal(res.body.code, 'accessDenied');
        // Keboola still words the metadata refusal with its older role message
        const metadataAdd = method === 'POST' && url.endsWith('/metadata');
        assert.match(
          res.body.error,
          metadataAdd
            ? /^Configuration manipulation is restricted for your user role$/
            : /You don't have access to the resource/,
        );
      }
      const after = await server().get(configsPath(config.id));
      assert.equal(after.body.version, 2, 'nothing changed: create + row only');
      assert.equal(after.body.name, 'Guarded');
    });
  });

  describe('projects are isolated', () => {
    it('a token of another project sees none of the configurations and gets 404 for their ids', async () => {
      const config = await server().createConfig({ name: 'Alpha secret config' });
      await server().createRow(config.id, { name: 'alpha row' });
      const beta = await server().createToken({ project: 'beta' });

      const list = await server().get(`${BRANCH}/components`, { token: beta });
      assert.deepEqual(list.body, []);
      const configs = await server().get(configsPath(), { token: beta });
      assert.deepEqual(configs.body, []);
      for (const url of [configsPath(config.id), configsPath(config.id, 'rows'), configsPath(config.id, 'versions')]) {
        const res = await server().get(url, { token: beta });
        assert.equal(res.status, 404, url);
        assert.equal(res.body.error, `Configuration ${config.id} not found`);
      }
      const update = await server().put(configsPath(config.id), { token: beta, json: { name: 'hijacked' } });
      assert.equal(update.status, 404);
      const del = await server().delete(configsPath(config.id), { token: beta });
      assert.equal(del.status, 404);

      // beta may use the same id for its own configuration without touching alpha's
      const own = await server().post(configsPath(), {
        token: beta,
        json: { name: 'Beta', configurationId: config.id },
      });
      assert.equal(own.status, 201);
      const alpha = await server().get(configsPath(config.id));
      assert.equal(alpha.body.name, 'Alpha secret config');
      assert.equal(alpha.body.rows.length, 1);
    });
  });
});
