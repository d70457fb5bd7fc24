import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '../../src/common/logger.js';
import { buildServer } from '../../src/server/app.js';
import { hashToken } from '../../src/store/embedded/tokens.js';
import { openDatabase } from '../../src/store/open-store.js';
import { migrate } from '../../src/store/sql/migrations.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { storeBackends, TEST_KEY } from '../support/store.js';
import {
  BRANCH,
  DEPRECATED,
  describeEachBackend,
  useTestServer,
  type ApiResponse,
  type Json,
} from '../support/storage-api-server.js';

/**
 * Token management over HTTP (issue 23 item 12, docs/storage-api.md#token-management): what a
 * master token is, that `tokens/verify` says so truthfully, and Keboola's create / list / detail /
 * refresh / delete calls — master only (a token may read and refresh itself), within the caller's
 * project, secrets shown once and never logged, hostile descriptions kept as data.
 */

function assertError(res: ApiResponse, status: number, code: string, message: RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.code, code, res.text);
  assert.equal(res.body.status, 'error');
  assert.match(res.body.error, message);
}

describeEachBackend('server: token management', (backend) => {
  const server = useTestServer({ backend });
  let project = 0;
  let master: string;
  let writer: string;
  let reader: string;
  const S = DEPRECATED;

  beforeEach(async () => {
    // a project per test: lists see only its tokens
    const name = `tokens-${++project}`;
    master = await server().createToken({ description: 'admin', master: true, project: name });
    writer = await server().createToken({ description: 'ci', project: name });
    reader = await server().createToken({ description: 'dashboard', readOnly: true, project: name });
  });

  const verify = async (token: string) => (await server().get(`${S}/tokens/verify`, { token })).body;
  const create = (body: Record<string, unknown>, token = master) => server().post(`${S}/tokens`, { token, json: body });

  it('tokens/verify says truthfully what a token can do: a master token manages tokens, the others do not', async () => {
    const m = await verify(master);
    assert.equal(m.isMasterToken, true);
    assert.equal(m.canManageTokens, true);
    assert.equal(m.canManageBuckets, true);
    assert.equal(m.canPurgeTrash, true);
    const w = await verify(writer);
    assert.deepEqual(
      [w.isMasterToken, w.canManageTokens, w.canManageBuckets, w.canPurgeTrash],
      [false, false, true, true],
    );
    const r = await verify(reader);
    assert.deepEqual(
      [r.isMasterToken, r.canManageTokens, r.canManageBuckets, r.canPurgeTrash],
      [false, false, false, false],
    );
    for (const t of [m, w, r]) assert.equal(t.creatorToken, undefined, 'made by the operator, not by a token');
    // Keboola names a master token's administrator (Go SDK: TokenAdmin{name, id int, features, isOrganizationMember, role})
    assert.deepEqual(m.admin, {
      id: Number(m.id),
      name: 'admin',
      features: [],
      isOrganizationMember: false,
      role: 'admin',
    });
    assert.deepEqual(
      Object.keys(m).slice(-4),
      ['admin', 'organization', 'owner', 'gexRunner'],
      "Keboola's keys, then gex's own",
    );
    for (const t of [w, r]) assert.equal(t.admin, undefined, 'only a master token has an admin');
    // the branch form says the same; other answers carry no admin (Keboola: verify only)
    assert.deepEqual((await server().get(`${BRANCH}/tokens/verify`, { token: master })).body.admin, m.admin);
    assert.equal((await server().get(`${S}/tokens/${m.id}`, { token: master })).body.admin, undefined);
  });

  it('lets only a master token list, create, read, refresh and delete other tokens (403 for the others, in both path forms)', async () => {
    const other = (await verify(master)).id;
    for (const token of [writer, reader]) {
      for (const prefix of [S, BRANCH]) {
        assertError(
          await server().get(`${prefix}/tokens`, { token }),
          403,
          'accessDenied',
          /Only a master token may list tokens\. .*gex tokens create --master/,
        );
        assertError(
          await server().post(`${prefix}/tokens`, { token, json: { description: 'x' } }),
          403,
          'accessDenied',
          /Only a master token may create tokens/,
        );
        assertError(
          await server().get(`${prefix}/tokens/${other}`, { token }),
          403,
          'accessDenied',
          /may read other tokens/,
        );
        assertError(
          await server().post(`${prefix}/tokens/${other}/refresh`, { token }),
          403,
          'accessDenied',
          /may refresh other tokens/,
        );
        assertError(
          await server().delete(`${prefix}/tokens/${other}`, { token }),
          403,
          'accessDenied',
          /may delete tokens/,
        );
      }
    }
    assert.equal((await server().get(`${S}/tokens/verify`, { token: master })).status, 200, 'nothing was changed');
    const list = await server().get(`${BRANCH}/tokens`, { token: master });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((t: Json) => t.description),
      ['admin', 'ci', 'dashboard'],
    );
  });

  it('creates tokens whose secret is shown once: read-write with canManageBuckets, else read-only, never master', async () => {
    const me = await verify(master);
    const made = await create({
      description: 'etl',
      canManageBuckets: true,
      canManageTokens: true,
      canPurgeTrash: true,
      bucketPermissions: {},
      componentAccess: [],
    });
    assert.equal(made.status, 201, made.text);
    assert.match(made.body.token, /^\d+-\d+-[A-Za-z0-9_-]{40}$/);
    assert.deepEqual(
      [made.body.isMasterToken, made.body.canManageTokens, made.body.canManageBuckets],
      [false, false, true],
    );
    assert.deepEqual(made.body.creatorToken, { id: Number(me.id), description: 'admin' });
    assert.equal(made.body.uri, `${server().baseUrl}/v2/storage/tokens/${made.body.id}`);
    assert.equal(made.body.owner.id, me.owner.id);

    // it works, as what it was made
    const used = await verify(made.body.token);
    assert.equal(used.id, made.body.id);
    assert.equal(used.isMasterToken, false);
    assert.equal(
      (
        await server().post(`${BRANCH}/components/ex-generic-v2/configs`, {
          token: made.body.token,
          json: { name: 'by etl' },
        })
      ).status,
      201,
    );

    // no secret in a list or a detail (gex stores only hashes)
    const list = await server().get(`${S}/tokens`, { token: master });
    assert.ok(!list.text.includes(made.body.token.slice(-20)));
    assert.ok(list.body.every((t: Json) => !('token' in t)));
    const detail = await server().get(`${S}/tokens/${made.body.id}`, { token: master });
    assert.equal(detail.status, 200);
    assert.equal('token' in detail.body, false);
    assert.deepEqual(detail.body, Object.fromEntries(Object.entries(made.body).filter(([key]) => key !== 'token')));

    // without canManageBuckets: a token that reads and changes nothing
    const readOnly = await create({ description: 'viewer' });
    assert.equal(readOnly.status, 201);
    assert.deepEqual(
      [readOnly.body.canManageBuckets, readOnly.body.canPurgeTrash, readOnly.body.isMasterToken],
      [false, false, false],
    );
    assertError(
      await server().post(`${BRANCH}/components/ex-generic-v2/configs`, {
        token: readOnly.body.token,
        json: { name: 'no' },
      }),
      403,
      'accessDenied',
      /access/,
    );
    assert.equal(
      (await server().get(`${BRANCH}/components/ex-generic-v2/configs`, { token: readOnly.body.token })).status,
      200,
    );

    // a form body (the older clients), flags as text
    const form = await server().post(`${S}/tokens`, {
      token: master,
      form: { description: 'form', canManageBuckets: '1' },
    });
    assert.equal(form.status, 201, form.text);
    assert.equal(form.body.canManageBuckets, true);
  });

  it('keeps hostile descriptions as data and refuses what gex cannot grant, naming the field', async () => {
    const hostile = 'x"\n\u001b[31m<script>\u0007 😀 ${env}';
    const made = await create({ description: hostile });
    assert.equal(made.status, 201);
    assert.equal(made.body.description, hostile);
    assert.equal((await server().get(`${S}/tokens/${made.body.id}`, { token: master })).body.description, hostile);
    assert.doesNotMatch(made.text, /[\u0000-\u001f]/, 'control characters leave escaped');
    assert.equal((await create({ description: 'y'.repeat(1000) })).status, 201);
    assert.equal((await create({ description: 42 })).body.description, '42');
    assert.equal((await create({})).body.description, '');

    const refusals: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ description: 'y'.repeat(1001) }, 'description', /at most 1000 characters, got 1001/],
      [{ description: { a: 1 } }, 'description', /of type string/],
      [{ description: 'a\u0000b' }, 'description', /contains a NUL character/],
      [{ bucketPermissions: { 'in.c-main': 'read' } }, 'bucketPermissions', /gex has no per-bucket permissions/],
      [{ componentAccess: ['keboola.ex-db-mysql'] }, 'componentAccess', /gex has no per-component access/],
      [{ expiresIn: 60 }, 'expiresIn', /gex tokens do not expire/],
      [{ canManageBuckets: 'maybe' }, 'canManageBuckets', /of type bool/],
    ];
    const before = (await server().get(`${S}/tokens`, { token: master })).body.length;
    for (const [body, key, message] of refusals) {
      const res = await create(body);
      assertError(res, 400, 'storage.tokens.validation', message);
      assert.deepEqual(
        res.body.errors.map((e: Json) => e.key),
        [key],
      );
    }
    assertError(
      await server().post(`${S}/tokens`, { token: master, rawJson: '[1]' }),
      400,
      'storage.tokens.validation',
      /must be a JSON object/,
    );
    assert.equal(
      (await server().get(`${S}/tokens`, { token: master })).body.length,
      before,
      'a refused create makes no token',
    );
  });

  it("keeps projects apart: another project's tokens are not found, whatever the call", async () => {
    const stranger = await server().createToken({
      description: 'stranger',
      master: true,
      project: `elsewhere-${project}`,
    });
    const theirs = (await verify(stranger)).id;
    const list = await server().get(`${S}/tokens`, { token: master });
    assert.ok(!list.body.some((t: Json) => t.id === theirs));
    assertError(
      await server().get(`${S}/tokens/${theirs}`, { token: master }),
      404,
      'storage.tokens.notFound',
      new RegExp(`Token ${theirs} not found in this project`),
    );
    assertError(
      await server().post(`${S}/tokens/${theirs}/refresh`, { token: master }),
      404,
      'storage.tokens.notFound',
      /not found/,
    );
    assertError(
      await server().delete(`${S}/tokens/${theirs}`, { token: master }),
      404,
      'storage.tokens.notFound',
      /not found/,
    );
    assert.equal((await verify(stranger)).id, theirs, 'untouched');
    for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999', '%00']) {
      assertError(
        await server().get(`${S}/tokens/${bad}`, { token: master }),
        404,
        'storage.tokens.notFound',
        /a token id is a number/,
      );
    }
  });

  it('refreshes: every token itself, a master token any token that is not master; the old secret stops at once', async () => {
    const readerId = (await verify(reader)).id;
    const own = await server().post(`${S}/tokens/${readerId}/refresh`, { token: reader });
    assert.equal(own.status, 200, own.text);
    assert.notEqual(own.body.token, reader);
    assert.equal(own.body.canManageBuckets, false, 'still what it was');
    assert.ok(own.body.refreshed >= own.body.created);
    assert.equal((await server().get(`${S}/tokens/verify`, { token: reader })).status, 401);
    assert.equal((await verify(own.body.token)).id, readerId);
    assert.equal(
      (await server().get(`${S}/tokens/${readerId}`, { token: own.body.token })).body.refreshed,
      own.body.refreshed,
      'a token reads itself',
    );

    const writerId = (await verify(writer)).id;
    const byMaster = await server().post(`${BRANCH}/tokens/${writerId}/refresh`, { token: master });
    assert.equal(byMaster.status, 200);
    assert.equal((await server().get(`${S}/tokens/verify`, { token: writer })).status, 401);
    assert.equal((await verify(byMaster.body.token)).description, 'ci');

    const other = await server().createToken({
      description: 'second admin',
      master: true,
      project: `tokens-${project}`,
    });
    const otherId = (await verify(other)).id;
    assertError(
      await server().post(`${S}/tokens/${otherId}/refresh`, { token: master }),
      403,
      'accessDenied',
      /is a master token: only it can refresh itself/,
    );
    assert.equal((await server().get(`${S}/tokens/verify`, { token: other })).status, 200, 'not refreshed');
    const self = await server().post(`${S}/tokens/${otherId}/refresh`, { token: other });
    assert.equal(self.status, 200);
    assert.equal((await verify(self.body.token)).isMasterToken, true);
  });

  it('deletes tokens that are not master (401 from then on); master tokens only through gex tokens revoke', async () => {
    const writerId = (await verify(writer)).id;
    assert.equal((await server().delete(`${S}/tokens/${writerId}`, { token: master })).status, 204);
    assert.equal((await server().get(`${S}/tokens/verify`, { token: writer })).status, 401);
    assertError(
      await server().delete(`${S}/tokens/${writerId}`, { token: master }),
      404,
      'storage.tokens.notFound',
      /not found/,
    );

    const masterId = (await verify(master)).id;
    assertError(
      await server().delete(`${BRANCH}/tokens/${masterId}`, { token: master }),
      400,
      'storage.tokens.cannotDeleteMasterToken',
      new RegExp(`gex tokens revoke ${masterId}`),
    );
    assert.equal((await server().get(`${S}/tokens/verify`, { token: master })).status, 200);
  });
});

describeEachBackend('server: token management never logs a secret', (backend) => {
  const server = useTestServer({ backend });
  let app: FastifyInstance;
  let url: string;
  const lines: string[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = createLogger({ level: 'debug', format: 'json', stdout: sink, stderr: sink });
    app = await buildServer({ backend: server().backend, logger });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => app.close());

  it('writes request lines for create, refresh and refused calls without any token text', async () => {
    const master = await server().createToken({ description: 'admin', master: true, project: 'logged' });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { 'X-StorageApi-Token': master, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as Json };
    };
    const made = await call('POST', '/v2/storage/tokens', { description: 'logged one' });
    assert.equal(made.status, 201);
    const refreshed = await call('POST', `/v2/storage/tokens/${made.body.id}/refresh`);
    assert.equal(refreshed.status, 200);
    assert.equal((await call('POST', '/v2/storage/tokens', { expiresIn: 5 })).status, 400);
    // a request's line is written once its answer has gone out: wait for the three, turn by turn
    const requestLines = () => lines.filter((line) => line.includes('"msg":"request"')).length;
    for (let turn = 0; turn < 10_000 && requestLines() < 3; turn++)
      await new Promise((resolve) => setImmediate(resolve));
    assert.equal(requestLines(), 3, lines.join(''));
    const log = lines.join('');
    for (const secret of [master, made.body.token, refreshed.body.token]) {
      assert.ok(!log.includes(secret) && !log.includes(secret.slice(-24)), 'no token text in the log');
    }
  });
});

for (const factory of storeBackends()) {
  describe(`store: tokens made before token management (${factory.name})`, () => {
    it('keep working after migrations 5 and 11 and are neither master nor runner: an upgrade gives no token a new power', async () => {
      const store = await factory.fresh();
      try {
        const db = await openDatabase(store.location, TEST_KEY);
        try {
          await migrate(db, { upTo: 4 });
          await db.run("INSERT INTO projects (id, name, created) VALUES (3, 'old', '2024-01-01T00:00:00+0000')");
          await db.run(
            "INSERT INTO tokens (id, project_id, description, token_hash, read_only, internal, created) VALUES (9, 3, 'old admin', ?, 0, 0, '2024-01-01T00:00:00+0000')",
            [hashToken('3-9-legacy')],
          );
        } finally {
          await db.close();
        }
        const backend = await openEmbeddedStore(store.location, TEST_KEY);
        try {
          const token = await backend.authenticate('3-9-legacy');
          assert.deepEqual(token, {
            id: 9,
            description: 'old admin',
            projectId: 3,
            projectName: 'old',
            readOnly: false,
            canManageTokens: false,
            runner: false,
            created: '2024-01-01T00:00:00+0000',
          });
        } finally {
          await backend.close();
        }
      } finally {
        await store.dispose();
      }
    });
  });
}
