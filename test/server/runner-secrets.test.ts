import assert from 'node:assert/strict';
import { fromPlain } from '../../src/json/index.js';
import { MAX_REVEAL_CIPHERS } from '../../src/store/secret-reveal.js';
import {
  BRANCH,
  configsPath,
  DEPRECATED,
  describeEachBackend,
  useTestServer,
  type ApiResponse,
  type Json,
} from '../support/storage-api-server.js';

/**
 * Runner tokens (issue 33 item 6, docs/security.md#who-sees-a-secret): `POST /v2/storage/gex/decrypt`
 * gives a runner token the plaintext of its own project's ciphers and every other token nothing —
 * read-only, read-write, master, another project's runner, a deleted one, none. The capability is
 * the operator's to grant (never over HTTP, never by a refresh of someone else's token), shown as
 * `gexRunner`, and the answer is never stored by the server or a cache in between.
 */

const DECRYPT = `${DEPRECATED}/gex/decrypt`;
const SECRET = 'Rv8Qm3Lp-runner-plain';
const ROW_SECRET = 'Hx2Wn7Ks-row-plain';
const STATE_SECRET = 'Tb5Yc9Fd-state-plain';
const COMPONENT_SECRET = 'Gm4Zr6Pw-image-plain';
const MARKERS = ['Rv8Qm3Lp', 'Hx2Wn7Ks', 'Tb5Yc9Fd', 'Gm4Zr6Pw'];

function assertNoPlaintext(res: ApiResponse, where: string): void {
  for (const marker of MARKERS) assert.ok(!res.text.includes(marker), `${where} holds ${marker}: ${res.text}`);
}

function assertError(res: ApiResponse, status: number, code: string, message: RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.code, code, res.text);
  assert.match(res.body.error, message);
}

describeEachBackend('server: runner tokens and POST /v2/storage/gex/decrypt', (backend) => {
  const server = useTestServer({ backend });
  let project = 0;
  let runner: string;
  let writer: string;
  let reader: string;
  let master: string;
  let otherRunner: string;
  let configId: string;
  /** the configuration's, its row's and its state's ciphers, as the API serves them */
  let ciphers: { config: string; row: string; state: string };

  beforeEach(async () => {
    const name = `runner-${++project}`;
    runner = await server().createToken({ description: 'runner', runner: true, project: name });
    writer = await server().createToken({ description: 'writer', project: name });
    reader = await server().createToken({ description: 'reader', readOnly: true, project: name });
    master = await server().createToken({ description: 'admin', master: true, project: name });
    otherRunner = await server().createToken({ description: 'runner elsewhere', runner: true, project: `${name}-b` });
    const created = await server().post(configsPath(), {
      token: writer,
      json: {
        name: 'c',
        configuration: { parameters: { '#token': SECRET } },
        state: { component: { '#s': STATE_SECRET } },
      },
    });
    assert.equal(created.status, 201, created.text);
    configId = created.body.id;
    const row = await server().post(configsPath(configId, 'rows'), {
      token: writer,
      json: { rowId: 'r', configuration: { parameters: { '#rowKey': ROW_SECRET } } },
    });
    assert.equal(row.status, 201, row.text);
    const read = (await server().get(configsPath(configId), { token: writer })).body;
    ciphers = {
      config: read.configuration.parameters['#token'],
      row: read.rows[0].configuration.parameters['#rowKey'],
      state: read.state.component['#s'],
    };
    for (const cipher of Object.values(ciphers)) assert.match(cipher, /^KBC::ProjectSecure::/);
  });

  const decrypt = (
    token: string | null,
    body: unknown = { componentId: 'ex-generic-v2', scope: 'project', ciphers: Object.values(ciphers) },
  ) => server().post(DECRYPT, { token, json: body });

  it('gives a runner token the plaintext of its project ciphers, marked no-store, in the order asked', async () => {
    const res = await decrypt(runner, {
      componentId: 'ex-generic-v2',
      scope: 'project',
      ciphers: [ciphers.state, ciphers.config, ciphers.row, ciphers.config],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { values: [STATE_SECRET, SECRET, ROW_SECRET, SECRET] });
    const raw = await fetch(`${server().baseUrl}${DECRYPT}`, {
      method: 'POST',
      headers: { 'X-StorageApi-Token': runner, 'Content-Type': 'application/json' },
      body: JSON.stringify({ componentId: 'ex-generic-v2', scope: 'project', ciphers: [ciphers.config] }),
    });
    assert.equal(raw.headers.get('cache-control'), 'no-store');
    assert.equal(raw.headers.get('content-type'), 'application/json');
  });

  it('gives every other token nothing: read-only, read-write and master 403, none or a deleted one 401, another project null', async () => {
    for (const [label, token] of [
      ['read-only', reader],
      ['read-write', writer],
      ['master', master],
    ] as const) {
      const res = await decrypt(token);
      assertError(
        res,
        403,
        'accessDenied',
        /Only a runner token receives secrets decrypted.*gex tokens create --runner/,
      );
      assertNoPlaintext(res, label);
      // a body the route would refuse: still 403, the token is checked first
      assertError(await decrypt(token, 'nonsense'), 403, 'accessDenied', /runner token/);
    }
    assertError(await decrypt(null), 401, '', /Access token must be set/);
    assertError(await decrypt('1-2-guessed'), 401, 'storage.tokenInvalid', /Invalid access token/);
    const other = await decrypt(otherRunner);
    assert.equal(other.status, 200, other.text);
    assert.deepEqual(
      other.body,
      { values: [null, null, null] },
      "another project's runner: each cipher is bound to its project",
    );

    const id = (await server().get(`${DEPRECATED}/tokens/verify`, { token: runner })).body.id;
    assert.equal((await server().delete(`${DEPRECATED}/tokens/${id}`, { token: master })).status, 204);
    assertError(await decrypt(runner), 401, 'storage.tokenInvalid', /Invalid access token/);
  });

  it('decrypts nothing else: another component, the registry scope, a damaged cipher, plain text', async () => {
    const res = await decrypt(runner, {
      componentId: 'keboola.ex-other',
      scope: 'project',
      ciphers: [ciphers.config],
    });
    assert.deepEqual(res.body, { values: [null] }, 'bound to the component too');
    const scoped = await decrypt(runner, {
      componentId: 'ex-generic-v2',
      scope: 'component',
      ciphers: [ciphers.config],
    });
    assert.deepEqual(scoped.body, { values: [null] }, 'a project cipher is no component cipher');
    const damaged = `${ciphers.config.slice(0, -6)}AAAAAA`;
    const odd = await decrypt(runner, {
      componentId: 'ex-generic-v2',
      scope: 'project',
      ciphers: [damaged, 'KBC::ProjectSecure::', 'plain text', ''],
    });
    assert.deepEqual(odd.body, { values: [null, null, null, null] }, 'no echo of what is not a cipher');
  });

  it("decrypts the component registry's ciphers (image parameters) for a runner token only", async () => {
    await server().backend.importComponents(
      fromPlain([
        { id: 'keboola.ex-secretive', type: 'extractor', data: { image_parameters: { '#k': COMPONENT_SECRET } } },
      ]),
    );
    const detail = await server().get(`${DEPRECATED}/components/keboola.ex-secretive`, { token: null });
    const cipher: string = detail.body.data.image_parameters['#k'];
    assert.match(cipher, /^KBC::ComponentSecure::/);
    const body = { componentId: 'keboola.ex-secretive', scope: 'component', ciphers: [cipher] };
    assert.deepEqual((await decrypt(runner, body)).body, { values: [COMPONENT_SECRET] });
    assert.deepEqual((await decrypt(otherRunner, body)).body, { values: [COMPONENT_SECRET] }, 'the registry is global');
    for (const token of [reader, writer, master]) assert.equal((await decrypt(token, body)).status, 403);
  });

  it('refuses a malformed request without quoting any value back', async () => {
    const probe = 'KBC::ProjectSecure::Zz9Probe';
    for (const [body, field] of [
      [[probe], /JSON object/],
      [{ scope: 'project', ciphers: [probe] }, /componentId/],
      [{ componentId: '..', scope: 'project', ciphers: [probe] }, /componentId: the id is "\.\."/],
      [{ componentId: 'ex-generic-v2', scope: 'everything', ciphers: [probe] }, /scope/],
      [{ componentId: 'ex-generic-v2', scope: 'project', ciphers: probe }, /ciphers: a list/],
      [{ componentId: 'ex-generic-v2', scope: 'project', ciphers: [probe, 7] }, /ciphers: a list/],
      [
        { componentId: 'ex-generic-v2', scope: 'project', ciphers: Array(MAX_REVEAL_CIPHERS + 1).fill(probe) },
        new RegExp(`at most ${MAX_REVEAL_CIPHERS} per request, got ${MAX_REVEAL_CIPHERS + 1}`),
      ],
    ] as const) {
      const res = await decrypt(runner, body);
      assertError(res, 400, 'storage.gex.decrypt.validation', field);
      assert.ok(!res.text.includes('Zz9Probe'), res.text);
    }
    const full = await decrypt(runner, {
      componentId: 'ex-generic-v2',
      scope: 'project',
      ciphers: Array(MAX_REVEAL_CIPHERS).fill(ciphers.config),
    });
    assert.equal(full.status, 200);
    assert.equal(full.body.values.length, MAX_REVEAL_CIPHERS);
  });

  it('no ordinary answer carries plaintext, not even to a runner token after it decrypted (read cache)', async () => {
    const paths = [
      configsPath(),
      configsPath(configId),
      configsPath(configId, 'rows'),
      configsPath(configId, 'rows', 'r'),
      configsPath(configId, 'versions'),
      configsPath(configId, 'versions', '2'),
      configsPath(configId, 'rows', 'r', 'versions'),
      configsPath(configId, 'rows', 'r', 'versions', '1'),
      `${BRANCH}/components?include=configuration,rows,state`,
      `${DEPRECATED}/components/ex-generic-v2/configs/${configId}`,
    ];
    const all = [runner, writer, reader, master];
    // read once (cached), decrypt, read again (served from the cache where it can be)
    for (const token of all) for (const p of paths) assertNoPlaintext(await server().get(p, { token }), p);
    assert.equal((await decrypt(runner)).status, 200);
    for (const token of all)
      for (const p of paths) {
        const res = await server().get(p, { token });
        assert.equal(res.status, 200, `${p}: ${res.text}`);
        assertNoPlaintext(res, p);
      }
    const copy = await server().post(configsPath(configId, 'versions', '2', 'create'), {
      token: writer,
      json: { name: 'copy' },
    });
    assert.equal(copy.status, 201, copy.text);
    assertNoPlaintext(copy, 'a copy');
    assertNoPlaintext(await server().get(configsPath(String(copy.body.id)), { token: runner }), 'the copy read back');
  });

  it('shows the capability as gexRunner; only the operator grants it: not over HTTP, not by refreshing another token', async () => {
    const verify = async (token: string) => (await server().get(`${DEPRECATED}/tokens/verify`, { token })).body;
    assert.equal((await verify(runner)).gexRunner, true);
    for (const token of [writer, reader, master]) assert.equal((await verify(token)).gexRunner, false);
    const runnerId = (await verify(runner)).id;
    const listed = (await server().get(`${DEPRECATED}/tokens`, { token: master })).body as Json[];
    assert.deepEqual(
      listed.map((t) => [t.description, t.gexRunner]),
      [
        ['runner', true],
        ['writer', false],
        ['reader', false],
        ['admin', false],
      ],
    );
    assert.equal((await server().get(`${BRANCH}/tokens/${runnerId}`, { token: master })).body.gexRunner, true);

    for (const flag of [true, 'true', 1, '1'])
      assertError(
        await server().post(`${DEPRECATED}/tokens`, { token: master, json: { description: 'x', gexRunner: flag } }),
        400,
        'storage.tokens.validation',
        /gexRunner: a runner token .*only the operator of the store makes one/,
      );
    const made = await server().post(`${DEPRECATED}/tokens`, {
      token: master,
      json: { description: 'made over HTTP', canManageBuckets: true, gexRunner: false },
    });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.body.gexRunner, false);
    assert.equal((await decrypt(made.body.token)).status, 403);

    // a master token refreshing a runner token would hold a token that reads every secret
    assertError(
      await server().post(`${DEPRECATED}/tokens/${runnerId}/refresh`, { token: master }),
      403,
      'accessDenied',
      /is a runner token: only it can refresh itself/,
    );
    assert.deepEqual((await decrypt(runner)).body.values, [SECRET, ROW_SECRET, STATE_SECRET], 'still the old text');
    const own = await server().post(`${DEPRECATED}/tokens/${runnerId}/refresh`, { token: runner });
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.gexRunner, true);
    assert.equal((await decrypt(runner)).status, 401, 'the old text no longer works');
    assert.equal((await decrypt(own.body.token)).status, 200, 'the new one is still a runner token');
  });

  it('makes no runner token that is read-only or master', async () => {
    await assert.rejects(
      server().backend.createToken({ description: 'x', runner: true, readOnly: true }),
      /A runner token cannot be read-only/,
    );
    await assert.rejects(
      server().backend.createToken({ description: 'x', runner: true, canManageTokens: true }),
      /A runner token cannot be a master token/,
    );
  });
});
