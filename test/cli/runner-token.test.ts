import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  startFixtureServer,
  type FixtureServer,
  type RecordedRequest,
} from '../support/fixture-server/fixture-server.js';
import { fromPlain } from '../../src/json/index.js';
import { phpUrlencode } from '../../src/php/index.js';
import { CIPHER_PREFIX } from '../../src/store/encryption.js';
import { runGex, startServe } from '../support/cli.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { assertNoSecret } from '../support/secret-forms.js';

/**
 * A runner elsewhere holds the server's URL and a runner token, no key (issue 33 item 6,
 * docs/security.md#who-sees-a-secret), against a real `gex serve` whose key is in its key file
 * only. Both sides are attacked: the runner token's run sends the secrets to the API and writes
 * them nowhere else, in no encoding; every other token — read-only, read-write, master, another
 * project's runner, a revoked one — gets no plaintext through any route, the read cache included,
 * and its run fails before the first request saying what to do. A master key given to a run
 * against a server (GEX_MASTER_KEY or GEX_KEY_FILE) is refused, never silently ignored.
 */

const SECRET = `Wq4Ld8Zn! *'()~/"é😀+ sp ace Jm6Tv3Rk`;
const STATE_SECRET = 'Pc7Xg2Hs-state';
const MARKERS = ['Wq4Ld8Zn', 'Jm6Tv3Rk', 'Pc7Xg2Hs'];
const C = 'ex-generic-v2';
/** no key of any kind, no store but the URL given */
const NO_KEY = { GEX_MASTER_KEY: '', GEX_KEY_FILE: '', GEX_STORE: '', KBC_URL: '', KBC_TOKEN: '' };

/** `/api/ok` answers records; `/api/fail` a 400 echoing what it got (URL and Authorization), as some APIs do. */
function api(request: RecordedRequest) {
  if (request.url.startsWith('/api/ok')) return { body: [{ id: 1, name: 'a' }] };
  return {
    status: 400,
    body: { error: 'Bad request', url: request.url, authorization: request.headers.authorization },
  };
}

const utf8Header = (value: unknown): string => Buffer.from(String(value), 'latin1').toString('utf8');

describe('a runner token: gex run against gex serve without any key, and every other token gets no plaintext', function () {
  this.timeout(120_000);
  let dir: string;
  let storeFile: string;
  let server: FixtureServer;
  let served: { child: ChildProcess; url: string; output: () => string };
  let configId: string;
  const tokens: Record<'runner' | 'writer' | 'reader' | 'master' | 'otherRunner' | 'revoked', string> = {
    runner: '',
    writer: '',
    reader: '',
    master: '',
    otherRunner: '',
    revoked: '',
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-runner-token-'));
    server = await startFixtureServer({ handler: api });
    storeFile = path.join(dir, 'store.sqlite');
    // the key lives in the key file next to the store, and only the server reads it
    const backend = await openEmbeddedStore(storeFile, { GEX_MASTER_KEY: '', GEX_KEY_FILE: '' });
    try {
      const make = async (
        description: string,
        options: { readOnly?: boolean; canManageTokens?: boolean; runner?: boolean; project?: string } = {},
      ) => (await backend.createToken({ description, project: 'shop', ...options })).token;
      tokens.runner = await make('runner', { runner: true });
      tokens.writer = await make('writer');
      tokens.reader = await make('reader', { readOnly: true });
      tokens.master = await make('admin', { canManageTokens: true });
      tokens.otherRunner = await make('runner of another project', { runner: true, project: 'elsewhere' });
      tokens.revoked = await make('revoked runner', { runner: true });
      const store = backend.session((await backend.authenticate(tokens.writer))!);
      const secret = { attr: '#password' };
      const c = await store.createConfiguration(C, {
        name: 'shop',
        configuration: fromPlain({
          parameters: { api: { baseUrl: `${server.url}/api/` }, config: { username: 'bob', '#password': SECRET } },
        }),
      });
      configId = c.id;
      const row = (rowId: string, parameters: object, isDisabled = false) =>
        store.createRow(C, c.id, { rowId, isDisabled, configuration: fromPlain({ parameters }) });
      await row('query', { config: { jobs: [{ endpoint: 'ok', params: { key: secret } }] } });
      await row('basic', { api: { authentication: { type: 'basic' } }, config: { jobs: [{ endpoint: 'ok' }] } });
      await row('header', { api: { http: { headers: { 'X-Key': secret } } }, config: { jobs: [{ endpoint: 'ok' }] } });
      await row('state', { config: { jobs: [{ endpoint: 'ok' }] } });
      await store.updateRowState(C, c.id, 'state', fromPlain({ component: { '#kept': STATE_SECRET } }));
      // runs only when named: the API refuses it and echoes the secret back, encoded twice over
      await row(
        'echo',
        {
          api: { authentication: { type: 'basic' } },
          config: { jobs: [{ endpoint: 'fail', params: { key: secret } }] },
        },
        true,
      );
    } finally {
      await backend.close();
    }
    served = await startServe(['--store', storeFile], { GEX_MASTER_KEY: '', GEX_KEY_FILE: '' });
  });

  after(async () => {
    served?.child.kill('SIGTERM');
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** requests to the decryption route the server has logged so far */
  const decryptCalls = () => served.output().match(/method=POST route=\/v2\/storage\/gex\/decrypt /g)?.length ?? 0;

  /** `gex run` in this process, as a runner elsewhere: the URL and a token only */
  const run = (token: string, name: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) =>
    runGexInProcess(
      [
        'run',
        '--config-id',
        configId,
        '--store',
        served.url,
        '--token',
        token,
        '--log-level',
        'debug',
        '--data-dir',
        path.join(dir, name),
        '--summary',
        path.join(dir, `${name}.json`),
        ...extra,
      ],
      { ...NO_KEY, ...env },
    );

  /** Every file a run wrote, but the tables (they hold what the API answered). */
  async function filesOf(name: string): Promise<Array<[string, string]>> {
    const out: Array<[string, string]> = [[`${name}.json`, await readFile(path.join(dir, `${name}.json`), 'utf8')]];
    for (const entry of await readdir(path.join(dir, name), { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath, entry.name);
      if (entry.isFile() && !file.includes(`${path.sep}out${path.sep}tables`))
        out.push([file, await readFile(file, 'utf8')]);
    }
    return out;
  }

  const assertNowhere = (texts: Array<[string, string]>, what: string) => {
    for (const [where, text] of texts) {
      assertNoSecret(text, SECRET, MARKERS, `${what}: ${where}`);
      assertNoSecret(text, STATE_SECRET, MARKERS, `${what}: ${where}`);
    }
  };

  it('the runner token runs every row: the API gets the secrets, the log, summary and data folder hold none', async () => {
    const before = server.requests.length;
    const decryptsBefore = decryptCalls();
    const result = await run(tokens.runner, 'runner');
    assert.equal(result.code, 0, result.stdout + result.stderr);
    // the root's secret recurs in every row's merged configuration: asked once, then the row's state
    assert.equal(decryptCalls() - decryptsBefore, 2, served.output());
    const sent = server.requests.slice(before);
    assert.ok(
      sent.some((r) => r.url === `/api/ok?key=${phpUrlencode(SECRET)}`),
      'the query got the secret',
    );
    assert.ok(
      sent.some((r) => r.headers.authorization === `Basic ${Buffer.from(`bob:${SECRET}`).toString('base64')}`),
      'Basic auth got it',
    );
    assert.ok(
      sent.some((r) => utf8Header(r.headers['x-key']) === SECRET),
      'the header got it',
    );
    assert.match(result.stdout, /GET http:\/\/127\.0\.0\.1:\d+\/api\/ok\?key=\[hidden\]/, 'registered with the masker');
    assertNowhere([['stdout', result.stdout], ['stderr', result.stderr], ...(await filesOf('runner'))], 'runner run');
    const config = JSON.parse(await readFile(path.join(dir, 'runner', 'rows', 'query', 'config.json'), 'utf8'));
    assert.ok(
      config.parameters.config['#password'].startsWith(CIPHER_PREFIX),
      'config.json keeps the cipher, as GE gets it',
    );

    // the state went back through the API: stored encrypted, still usable by the next run
    const row = await get(`/v2/storage/branch/default/components/${C}/configs/${configId}/rows/state`, tokens.writer);
    const kept: string = row.body.state.component['#kept'];
    assert.ok(kept.startsWith(CIPHER_PREFIX), row.text);
    const decrypted = await post('/v2/storage/gex/decrypt', tokens.runner, {
      componentId: C,
      scope: 'project',
      ciphers: [kept],
    });
    assert.deepEqual(decrypted.body, { values: [STATE_SECRET] });
  });

  it('an API echoing the secrets back: masked in every encoding on the remote path', async () => {
    const result = await run(tokens.runner, 'echo', ['--row-id', 'echo']);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /\[400\]/);
    assert.match(result.stderr, /\[hidden\]/, 'the echo was there, and hidden');
    assertNowhere([['stdout', result.stdout], ['stderr', result.stderr], ...(await filesOf('echo'))], 'echo run');
  });

  it("the container's line: a real process with KBC_URL, KBC_TOKEN and KBC_CONFIGID only", async () => {
    const result = await runGex(['run', '--summary', path.join(dir, 'container.json')], {
      ...NO_KEY,
      KBC_URL: served.url,
      KBC_TOKEN: tokens.runner,
      KBC_CONFIGID: configId,
      KBC_DATADIR: path.join(dir, 'container'),
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assertNowhere(
      [['stdout', result.stdout], ['stderr', result.stderr], ...(await filesOf('container'))],
      'container run',
    );
  });

  it('every other token fails before the first request, saying what to do; nothing is sent', async () => {
    const before = server.requests.length;
    for (const token of [tokens.writer, tokens.reader, tokens.master]) {
      const result = await run(token, 'refused');
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(
        result.stderr,
        /Cannot decrypt parameters\.config\.#password of row \S+: the Storage API at http:\/\/127\.0\.0\.1:\d+ gives secrets decrypted only to a runner token, and this token is not one\. Ask the operator of the server for a runner token \("gex tokens create --runner"\), or run the configuration as a job on the server \("gex jobs run --wait"\)/,
      );
      assertNowhere(
        [
          ['stdout', result.stdout],
          ['stderr', result.stderr],
        ],
        'refused run',
      );
    }
    const other = await run(tokens.otherRunner, 'other');
    assert.equal(other.code, 1);
    assert.match(other.stderr, /Configuration \S+ of component ex-generic-v2 not found/, "another project's runner");
    const check = await runGexInProcess(
      ['check', '--config-id', configId, '--store', served.url, '--token', tokens.writer],
      NO_KEY,
    );
    assert.equal(check.code, 1);
    assert.match(check.stderr + check.stdout, /gives secrets decrypted only to a runner token/);
    assert.equal(server.requests.length, before, 'no request reached the API');
  });

  it('a revoked runner token is refused at once, by a server that keeps running', async () => {
    const id = (await get('/v2/storage/tokens/verify', tokens.revoked)).body.id;
    assert.equal(
      (await post('/v2/storage/gex/decrypt', tokens.revoked, { componentId: C, scope: 'project', ciphers: [] })).status,
      200,
    );
    const revoked = await runGex(['tokens', 'revoke', String(id), '--store', storeFile], { GEX_MASTER_KEY: '' });
    assert.equal(revoked.code, 0, revoked.stderr);
    const decrypt = await post('/v2/storage/gex/decrypt', tokens.revoked, {
      componentId: C,
      scope: 'project',
      ciphers: [],
    });
    assert.equal(decrypt.status, 401, 'not served from the token cache');
    const result = await run(tokens.revoked, 'revoked');
    assert.equal(result.code, 1);
    assert.match(result.stderr, /Invalid access token/);
  });

  it('refuses a master key given to a run or check against a server: GEX_MASTER_KEY and GEX_KEY_FILE alike', async () => {
    const keyFile = path.join(dir, 'copied.key');
    await writeFile(keyFile, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    for (const [env, named] of [
      [{ GEX_MASTER_KEY: 'cd'.repeat(32) }, 'GEX_MASTER_KEY is set'],
      [{ GEX_KEY_FILE: keyFile }, 'GEX_KEY_FILE is set'],
      [{ GEX_MASTER_KEY: 'cd'.repeat(32), GEX_KEY_FILE: keyFile }, 'GEX_MASTER_KEY and GEX_KEY_FILE are set'],
    ] as const) {
      const result = await run(tokens.runner, 'with-key', [], env);
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(
        result.stderr,
        new RegExp(
          `${named}, but against the Storage API at http://127\\.0\\.0\\.1:\\d+ gex uses no master key of its own: the server decrypts the secrets for a runner token`,
        ),
      );
      const check = await runGexInProcess(
        ['check', '--config-id', configId, '--store', served.url, '--token', tokens.runner],
        {
          ...NO_KEY,
          ...env,
        },
      );
      assert.equal(check.code, 1);
      assert.match(check.stderr + check.stdout, new RegExp(named));
    }
    const check = await runGexInProcess(
      ['check', '--config-id', configId, '--store', served.url, '--token', tokens.runner],
      NO_KEY,
    );
    assert.equal(check.code, 0, check.stderr + check.stdout);
    assertNowhere([['check', check.stdout + check.stderr]], 'check');
  });

  const get = async (urlPath: string, token: string) => {
    const res = await fetch(`${served.url}${urlPath}`, { headers: { 'X-StorageApi-Token': token } });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text || 'null'), headers: res.headers };
  };
  const post = async (urlPath: string, token: string, body: unknown) => {
    const res = await fetch(`${served.url}${urlPath}`, {
      method: 'POST',
      headers: { 'X-StorageApi-Token': token, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text || 'null'), headers: res.headers };
  };

  it('no token gets plaintext through any route after the runs — the runner itself included — nor through the read cache', async () => {
    const base = `/v2/storage/branch/default/components/${C}/configs/${configId}`;
    const paths = [
      `/v2/storage/branch/default/components/${C}/configs`,
      `/v2/storage/components/${C}/configs?isDeleted=0`,
      base,
      `/v2/storage/components/${C}/configs/${configId}`,
      `${base}/rows`,
      `${base}/rows/query`,
      `${base}/rows/state`,
      `${base}/versions`,
      `${base}/versions/2`,
      `${base}/rows/query/versions`,
      `${base}/rows/query/versions/1`,
      `${base}/state`,
      '/v2/storage/branch/default/components?include=configuration,rows,state',
      '/v2/storage/components?include=configuration,rows',
      '/v2/storage/tokens/verify',
    ];
    const everyone = Object.entries(tokens);
    const ciphers: string[] = [];
    // twice: the second round is what the read cache serves
    for (let round = 0; round < 2; round++) {
      for (const [who, token] of everyone) {
        for (const p of paths) {
          const res = await get(p, token);
          assertNoSecret(res.text, SECRET, MARKERS, `${who} GET ${p}`);
          assertNoSecret(res.text, STATE_SECRET, MARKERS, `${who} GET ${p}`);
          for (const m of res.text.matchAll(/KBC::ProjectSecure::[A-Za-z0-9+/=]+/g)) ciphers.push(m[0]);
        }
      }
      assert.equal((await get(base, tokens.runner)).status, 200);
      assert.equal(
        (
          await post('/v2/storage/gex/decrypt', tokens.runner, {
            componentId: C,
            scope: 'project',
            ciphers: ciphers.slice(0, 10),
          })
        ).status,
        200,
      );
    }
    assert.ok(ciphers.length > 0, 'the routes served ciphers');
    const distinct = [...new Set(ciphers)].slice(0, 100);
    for (const [who, token] of everyone) {
      if (who === 'runner') continue;
      const res = await post('/v2/storage/gex/decrypt', token, { componentId: C, scope: 'project', ciphers: distinct });
      assertNoSecret(res.text, SECRET, MARKERS, `${who} POST gex/decrypt`);
      assertNoSecret(res.text, STATE_SECRET, MARKERS, `${who} POST gex/decrypt`);
      if (who === 'otherRunner')
        assert.ok(
          res.body.values.every((v: unknown) => v === null),
          res.text,
        );
      else assert.equal(res.status, who === 'revoked' ? 401 : 403, `${who}: ${res.text}`);
    }

    // a copy, a row copy and an export by a writer carry ciphers only
    const copy = await post(`${base}/versions/2/create`, tokens.writer, { name: 'copy' });
    assert.equal(copy.status, 201, copy.text);
    const rowCopy = await post(`${base}/rows/query/versions/1/create`, tokens.writer, {});
    assert.equal(rowCopy.status, 201, rowCopy.text);
    const exported = path.join(dir, 'export.json');
    const exportRun = await runGexInProcess(
      ['configs', 'export', configId, '--file', exported, '--store', served.url, '--token', tokens.writer],
      NO_KEY,
    );
    assert.equal(exportRun.code, 0, exportRun.stderr);
    for (const [where, text] of [
      ['copy', copy.text],
      ['row copy', rowCopy.text],
      ['export', await readFile(exported, 'utf8')],
      [
        'copy read back',
        (await get(`/v2/storage/branch/default/components/${C}/configs/${copy.body.id}`, tokens.reader)).text,
      ],
      ['the server log', served.output()],
    ] as const) {
      assertNoSecret(text, SECRET, MARKERS, where);
      assertNoSecret(text, STATE_SECRET, MARKERS, where);
    }
  });

  it('tokens/verify says which token is a runner token (gexRunner)', async () => {
    assert.equal((await get('/v2/storage/tokens/verify', tokens.runner)).body.gexRunner, true);
    for (const token of [tokens.writer, tokens.reader, tokens.master])
      assert.equal((await get('/v2/storage/tokens/verify', token)).body.gexRunner, false);
    const answer = await post('/v2/storage/gex/decrypt', tokens.runner, {
      componentId: C,
      scope: 'project',
      ciphers: [],
    });
    assert.equal(answer.headers.get('cache-control'), 'no-store');
  });
});
