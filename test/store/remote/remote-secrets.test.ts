import assert from 'node:assert/strict';
import nock from 'nock';
import { fromPlain, toPlain, type JsonValue } from '../../../src/json/index.js';
import { RemoteSecrets } from '../../../src/store/remote/remote-secrets.js';
import { StorageApiClient } from '../../../src/store/remote/storage-api-client.js';
import { MAX_REVEAL_CIPHERS } from '../../../src/store/secret-reveal.js';

/**
 * The runner's side of runner tokens (docs/security.md#who-sees-a-secret): which values it asks
 * its server to decrypt (ciphers under `#` keys, each once per run, in parts of at most
 * MAX_REVEAL_CIPHERS), and what a refusal becomes — a failure naming the key path, or (image
 * parameters) the ciphers kept.
 */

const URL = 'http://storage.test';
const P = 'KBC::ProjectSecure::';
const C = 'ex-generic-v2';

interface DecryptBody {
  componentId: string;
  scope: string;
  ciphers: string[];
}

function secrets(): RemoteSecrets {
  const api = new StorageApiClient({ url: URL, token: 't', maxRetries: 0 });
  return new RemoteSecrets(api, URL);
}

/** A server that decrypts `P<x>` to `plain-<x>` and records each request body. */
function decryptingServer(bodies: DecryptBody[]): nock.Scope {
  return nock(URL)
    .persist()
    .post('/v2/storage/gex/decrypt')
    .reply(200, (_uri, body) => {
      const request = body as DecryptBody;
      bodies.push(request);
      return {
        values: request.ciphers.map((c) =>
          c.startsWith(P) && !c.endsWith('bad') ? `plain-${c.slice(P.length)}` : null,
        ),
      };
    });
}

describe('RemoteSecrets: a remote store decrypting through its server', () => {
  afterEach(() => nock.cleanAll());

  it('asks for the ciphers under # keys only, each once per run, and puts the plaintext in their place', async () => {
    const bodies: DecryptBody[] = [];
    decryptingServer(bodies);
    const s = secrets();
    const value = fromPlain({
      '#a': `${P}1`,
      plain: `${P}not-under-a-hash-key`,
      nested: [{ '#b': `${P}2`, '#again': `${P}1` }],
      '#number': 7,
      '#component': 'KBC::ComponentSecure::x',
    });
    const out = toPlain(await s.decrypt('project', C, value, 'fail'));
    assert.deepEqual(out, {
      '#a': 'plain-1',
      plain: `${P}not-under-a-hash-key`,
      nested: [{ '#b': 'plain-2', '#again': 'plain-1' }],
      '#number': 7,
      '#component': 'KBC::ComponentSecure::x',
    });
    assert.deepEqual(bodies, [{ componentId: C, scope: 'project', ciphers: [`${P}1`, `${P}2`] }]);
    // the next row's merged configuration holds the root's secrets again: not asked twice
    await s.decrypt('project', C, fromPlain({ '#a': `${P}1`, '#c': `${P}3` }), 'fail');
    assert.deepEqual(bodies[1].ciphers, [`${P}3`]);
    const none = fromPlain({ a: 1 });
    assert.equal(await s.decrypt('project', C, none, 'fail'), none, 'no cipher: no request');
    assert.equal(bodies.length, 2);
  });

  it(`sends more than ${MAX_REVEAL_CIPHERS} ciphers in parts`, async () => {
    const bodies: DecryptBody[] = [];
    decryptingServer(bodies);
    const many = new Map<string, JsonValue>();
    for (let i = 0; i < MAX_REVEAL_CIPHERS * 2 + 1; i++) many.set(`#k${i}`, `${P}${i}`);
    const out = (await secrets().decrypt('project', C, many, 'fail')) as Map<string, JsonValue>;
    assert.deepEqual(
      bodies.map((b) => b.ciphers.length),
      [MAX_REVEAL_CIPHERS, MAX_REVEAL_CIPHERS, 1],
    );
    assert.equal(out.get(`#k${MAX_REVEAL_CIPHERS * 2}`), `plain-${MAX_REVEAL_CIPHERS * 2}`);
  });

  it('a cipher the server cannot decrypt fails naming its key path, never its value', async () => {
    decryptingServer([]);
    await assert.rejects(
      secrets().decrypt('project', C, fromPlain({ api: { '#key': `${P}bad` } }), 'fail'),
      (e: Error & { keyPath?: string }) =>
        e.keyPath === 'api.#key' &&
        /the server cannot decrypt it: it was encrypted with another master key, for another project or component/.test(
          e.message,
        ) &&
        !e.message.includes(`${P}bad`),
    );
    await assert.rejects(
      secrets().decrypt('component', C, fromPlain({ '#k': 'KBC::ComponentSecure::x' }), 'keep'),
      (e: Error & { fix?: string }) => /gex components import/.test(e.fix ?? ''),
      'a runner token whose image parameter does not decrypt: the run fails, as on the embedded store',
    );
  });

  it('a token that is not a runner token (403) or a Storage API without runners (404, 405, 501): fails saying what to do, or keeps the ciphers', async () => {
    for (const [status, said] of [
      [403, /gives secrets decrypted only to a runner token, and this token is not one/],
      [404, /decrypts no secret for a runner elsewhere \(a Keboola stack decrypts only inside its own jobs\)/],
      [405, /decrypts no secret for a runner elsewhere/],
      [501, /decrypts no secret for a runner elsewhere/],
    ] as const) {
      nock(URL).post('/v2/storage/gex/decrypt').times(2).reply(status, { error: 'no', code: 'x', status: 'error' });
      const value = fromPlain({ '#k': `${P}1` });
      await assert.rejects(
        secrets().decrypt('project', C, value, 'fail'),
        (e: Error & { keyPath?: string; fix?: string }) =>
          e.keyPath === '#k' && said.test(e.message) && /gex tokens create --runner/.test(e.fix ?? ''),
      );
      const image = fromPlain({ '#k': 'KBC::ComponentSecure::1' });
      assert.equal(
        await secrets().decrypt('component', C, image, 'keep'),
        image,
        `${status}: image parameters stay ciphers`,
      );
      assert.ok(nock.isDone(), 'both asked the server');
    }
  });

  it('other failures are what they are: an invalid token, an answer of another shape', async () => {
    nock(URL)
      .post('/v2/storage/gex/decrypt')
      .reply(401, { error: 'Invalid access token', code: 'storage.tokenInvalid' });
    await assert.rejects(secrets().decrypt('project', C, fromPlain({ '#k': `${P}1` }), 'keep'), /Invalid access token/);
    nock(URL)
      .post('/v2/storage/gex/decrypt')
      .reply(200, { values: ['one', 'two'] });
    await assert.rejects(
      secrets().decrypt('project', C, fromPlain({ '#k': `${P}1` }), 'fail'),
      /answered POST gex\/decrypt with something else than one value or null per cipher/,
    );
  });
});
