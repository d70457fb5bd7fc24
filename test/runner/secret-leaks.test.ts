import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  startFixtureServer,
  type FixtureServer,
  type RecordedRequest,
} from '../support/fixture-server/fixture-server.js';
import { fromPlain, toPlain } from '../../src/json/index.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { assertNoSecret } from '../support/secret-forms.js';

const KEY = '5a'.repeat(32);
/** every character the brief names: ! * ' ( ) ~ / " é 😀 + and a space, between two markers */
const SECRET = `Zq7Kx9Wm! *'()~/"é😀+ sp ace Yt5Pq2Lr`;
/** the session token the login API hands out: a secret obtained at run time */
const SESSION = `Sx4Vb8Nc-session/+é "tok"`;
/** a header secret of Latin-1 characters only (sent, like every header, as its UTF-8 bytes) */
const HEADER_SECRET = `Ak3Jd8Qp! *'()~/"é+ sp ace`;
const MARKERS = ['Zq7Kx9Wm', 'Yt5Pq2Lr', 'Sx4Vb8Nc', 'Ak3Jd8Qp'];

/** A header as its UTF-8 text (Node's server reads header bytes as Latin-1). */
const utf8Header = (value: unknown): string => Buffer.from(String(value), 'latin1').toString('utf8');

/** An API that refuses every data request with a 400 echoing what it received, as some APIs do. */
function echoingApi(request: RecordedRequest) {
  const echo = {
    error: 'Bad request',
    url: request.url,
    authorization: request.headers.authorization,
    key: request.headers['x-key'],
    session: request.headers['x-session'],
    body: request.body || undefined,
  };
  if (request.url.startsWith('/api/login-refused'))
    return { status: 403, body: { error: 'bad credentials', received: request.body } };
  if (request.url.startsWith('/api/login')) return { body: { token: SESSION } };
  // an API echoing a secret as a key: the parser structure (state) records keys
  if (request.url.startsWith('/api/ok')) return { body: [{ id: 1, [SECRET]: 'x' }] };
  return { status: 400, body: echo };
}

describe('secrets never leave a run (gex run --config-id, debug logs, failing API echoing the request)', function () {
  this.timeout(60000);
  let server: FixtureServer;
  let dir: string;
  let storeFile: string;
  let configId: string;

  before(async () => {
    server = await startFixtureServer({ handler: echoingApi });
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-secret-leaks-'));
    storeFile = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: KEY });
    const store = await backend.localSession();
    const secretAttr = { attr: '#password' };
    const c = await store.createConfiguration('ex-generic-v2', {
      name: 'leaks',
      configuration: fromPlain({
        parameters: {
          api: { baseUrl: `${server.url}/api/` },
          config: { username: 'bob', '#password': SECRET, '#headerKey': HEADER_SECRET },
        },
      }),
    });
    const row = (rowId: string, parameters: object) =>
      store.createRow('ex-generic-v2', c.id, { rowId, configuration: fromPlain({ parameters }) });
    await row('query', { config: { jobs: [{ endpoint: 'fail', params: { key: secretAttr, page: 1 } }] } });
    // header values go out as UTF-8 bytes (😀 too), as GE sends them; the API echoes them as Latin-1 text
    await row('header', {
      api: { http: { headers: { 'X-Key': secretAttr } } },
      config: { jobs: [{ endpoint: 'fail' }] },
    });
    await row('header-latin1', {
      api: { http: { headers: { 'X-Key': { attr: '#headerKey' } } } },
      config: { jobs: [{ endpoint: 'fail' }] },
    });
    await row('form', {
      config: { jobs: [{ endpoint: 'fail', method: 'FORM', params: { key: secretAttr, n: 'a b' } }] },
    });
    await row('json', {
      config: { jobs: [{ endpoint: 'fail', method: 'POST', params: { key: secretAttr, nested: { k: secretAttr } } }] },
    });
    await row('basic', { api: { authentication: { type: 'basic' } }, config: { jobs: [{ endpoint: 'fail' }] } });
    const login = (endpoint: string) => ({
      type: 'login',
      loginRequest: { endpoint, method: 'FORM', params: { user: 'bob', pass: secretAttr } },
      apiRequest: { headers: { 'X-Session': 'token' } },
    });
    await row('login', { api: { authentication: login('login') }, config: { jobs: [{ endpoint: 'fail' }] } });
    await row('login-refused', {
      api: { authentication: login('login-refused') },
      config: { jobs: [{ endpoint: 'fail' }] },
    });
    await row('state', { config: { jobs: [{ endpoint: 'ok' }] } });
    // a # value in the state: the next run needs it, the store keeps it encrypted
    await store.updateRowState('ex-generic-v2', c.id, 'state', fromPlain({ component: { '#kept': SECRET } }));
    configId = c.id;
    await backend.close();
  });
  after(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function filesUnder(folder: string): Promise<Array<[string, string]>> {
    const out: Array<[string, string]> = [];
    for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      if (file.includes(`${path.sep}out${path.sep}tables`)) continue; // tables hold what the API returned
      out.push([file, await readFile(file, 'utf8')]);
    }
    return out;
  }

  for (const [rowId, expected] of [
    ['query', 400],
    // headers go out as UTF-8 bytes, as GE sends them: the emoji is sent and the echo is hidden
    ['header', 400],
    ['header-latin1', 400],
    ['form', 400],
    ['json', 400],
    ['basic', 400],
    ['login', 400],
    ['login-refused', 403],
  ] as const) {
    it(`${rowId}: exit 1; stdout, stderr, summary and the data folder hold the secret in no encoding`, async () => {
      const summaryFile = path.join(dir, `summary-${rowId}.json`);
      const data = path.join(dir, `data-${rowId}`);
      const result = await runGexInProcess(
        [
          'run',
          '--config-id',
          configId,
          '--row-id',
          rowId,
          '--log-level',
          'debug',
          '--summary',
          summaryFile,
          '--data-dir',
          data,
        ],
        {
          GEX_MASTER_KEY: KEY,
          GEX_STORE: storeFile,
        },
      );
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`\\[${expected}\\]`), `the error names the status: ${result.stderr}`);
      assert.match(result.stderr, /\[hidden\]/, 'the echoed secret was there, and hidden');
      const summary = await readFile(summaryFile, 'utf8');
      assert.match(summary, /"kind": "user"/);
      for (const [where, text] of [
        ['stdout', result.stdout],
        ['stderr', result.stderr],
        ['summary', summary],
        ...(await filesUnder(data)),
      ]) {
        assertNoSecret(text, SECRET, MARKERS, `${rowId}: ${where}`);
        assertNoSecret(text, SESSION, MARKERS, `${rowId}: ${where}`);
        assertNoSecret(text, HEADER_SECRET, MARKERS, `${rowId}: ${where}`);
      }
      const sent = server.requests.at(-1)!;
      if (rowId === 'basic')
        assert.equal(
          sent.headers.authorization,
          `Basic ${Buffer.from(`bob:${SECRET}`).toString('base64')}`,
          'the API got the real credentials',
        );
      if (rowId === 'header') assert.equal(utf8Header(sent.headers['x-key']), SECRET, 'the API got the header');
      if (rowId === 'header-latin1')
        assert.equal(utf8Header(sent.headers['x-key']), HEADER_SECRET, 'the API got the header');
      if (rowId === 'login')
        assert.equal(utf8Header(sent.headers['x-session']), SESSION, 'the API got the session token');
    });
  }

  it('state: secrets in non-# state values are hidden in out/state.json, the summary and the stored state; # values stay usable', async () => {
    const summaryFile = path.join(dir, 'summary-state.json');
    const data = path.join(dir, 'data-state');
    const result = await runGexInProcess(
      [
        'run',
        '--config-id',
        configId,
        '--row-id',
        'state',
        '--log-level',
        'debug',
        '--summary',
        summaryFile,
        '--data-dir',
        data,
      ],
      {
        GEX_MASTER_KEY: KEY,
        GEX_STORE: storeFile,
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const outState = await readFile(path.join(data, 'rows', 'state', 'out', 'state.json'), 'utf8');
    assert.match(outState, /\[hidden\]/, 'the echoed key reached the state, hidden');
    const summary = await readFile(summaryFile, 'utf8');
    for (const [where, text] of [
      ['stdout', result.stdout],
      ['stderr', result.stderr],
      ['summary', summary],
      ...(await filesUnder(data)),
    ]) {
      assertNoSecret(text, SECRET, MARKERS, `state: ${where}`);
    }
    const backend = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: KEY });
    try {
      const store = await backend.localSession();
      const stored = (await store.getRow('ex-generic-v2', configId, 'state')).state;
      assertNoSecret(JSON.stringify(toPlain(stored)), SECRET, MARKERS, 'stored state');
      const component = toPlain(stored) as { component: { '#kept': string } };
      assert.match(JSON.stringify(component), /\[hidden\]/);
      assert.ok(component.component['#kept'].startsWith('KBC::ProjectSecure::'), 'a # value is stored encrypted');
      const decrypted = toPlain(backend.decryptSecrets(1, 'ex-generic-v2', stored)) as {
        component: { '#kept': string };
      };
      assert.equal(decrypted.component['#kept'], SECRET, 'and keeps its value for the next run');
    } finally {
      await backend.close();
    }
  });
});
