import assert from 'node:assert/strict';
import nock from 'nock';
import { oauth1Header, type OAuth1Credentials } from '../../../src/extractor/auth/index.js';
import type { HttpRequest } from '../../../src/extractor/http/types.js';
import { header, recordRequests, setupAuth, type AuthSetup } from '../../support/auth-setup.js';

function signature(headerValue: string): string {
  const m = /oauth_signature="([^"]+)"/.exec(headerValue);
  assert.ok(m, headerValue);
  return decodeURIComponent(m[1]);
}

describe('auth: oauth10 (HMAC-SHA1 as guzzlehttp/oauth-subscriber)', () => {
  it('RFC 5849 / OAuth Core 1.0 appendix A: GET with query parameters', () => {
    const request: HttpRequest = {
      method: 'GET',
      url: 'http://photos.example.net/photos?file=vacation.jpg&size=original',
      headers: [],
    };
    const credentials: OAuth1Credentials = {
      consumerKey: 'dpf43f3p2l4k3l03',
      consumerSecret: 'kd94hf93k423kf44',
      token: 'nnch734d00sl2jdk',
      tokenSecret: 'pfkkdhi9sl3r4s00',
    };
    assert.equal(
      signature(oauth1Header(request, credentials, 'kllo9940pd9333jh', 1191242096)),
      'tR3+Ty81lMeYAr/Fid0kMTYa/WM=',
    );
  });

  it("Twitter's documented example: POST form body and query both signed", () => {
    const request: HttpRequest = {
      method: 'POST',
      url: 'https://api.twitter.com/1.1/statuses/update.json?include_entities=true',
      headers: [['Content-Type', 'application/x-www-form-urlencoded']],
      body: 'status=Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21',
    };
    const credentials: OAuth1Credentials = {
      consumerKey: 'xvz1evFS4wEEPTGEFPHBog',
      consumerSecret: 'kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw',
      token: '370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb',
      tokenSecret: 'LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE',
    };
    const value = oauth1Header(request, credentials, 'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg', 1318622958);
    assert.equal(signature(value), 'hCtSmYh+iHYCEqBWrE7C7hYmtUk=');
    // a JSON body is not a form: not signed, so the signature differs
    const json = oauth1Header(
      { ...request, headers: [['Content-Type', 'application/json']] },
      credentials,
      'kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg',
      1318622958,
    );
    assert.notEqual(signature(json), 'hCtSmYh+iHYCEqBWrE7C7hYmtUk=');
  });

  describe('through the client', () => {
    let setup: AuthSetup | undefined;
    afterEach(() => {
      setup?.close();
      setup = undefined;
      nock.cleanAll();
    });

    const authorization = {
      oauth_api: {
        credentials: {
          '#data': '{"oauth_token":"userToken","oauth_token_secret":"tokenSecret"}',
          appKey: 1234,
          '#appSecret': 'TopSecret',
        },
      },
    };

    it('reproduces the recorded EX102 header byte for byte with its nonce and timestamp', async () => {
      const received = recordRequests();
      setup = setupAuth({
        api: { baseUrl: 'http://api.test:80/102-oauth1/', authentication: { type: 'oauth10' } },
        authorization,
        runtime: { now: () => 1492904452, nonce: () => '72469d96572dabb4d0ea02b057ea4f246d722b72' },
      });
      // signed as GE signs http://mock-server/102-oauth1/users: only the host differs
      const request = setup.request('users');
      assert.equal(request.url, 'http://api.test/102-oauth1/users');
      const mockServerRequest = { ...request, url: 'http://mock-server/102-oauth1/users' };
      const signed = await setup.auth.beforeRequest(mockServerRequest, setup.client.sendUnauthenticated);
      assert.deepEqual(
        signed.headers.find(([n]) => n === 'Authorization'),
        [
          'Authorization',
          'OAuth oauth_consumer_key="1234", oauth_nonce="72469d96572dabb4d0ea02b057ea4f246d722b72", oauth_signature="zl0y5CyySCPj8IqODV3Egjqgg6Q%3D", ' +
            'oauth_signature_method="HMAC-SHA1", oauth_timestamp="1492904452", oauth_token="userToken", oauth_version="1.0"',
        ],
      );
      await setup.client.send(request);
      assert.match(
        header(received[0], 'authorization') ?? '',
        /^OAuth oauth_consumer_key="1234", oauth_nonce="72469d9.*oauth_token="userToken", oauth_version="1.0"$/,
      );
      assert.deepEqual(
        setup.secrets.filter((s) => s === 'userToken' || s === 'tokenSecret'),
        ['userToken', 'tokenSecret'],
      );
      assert.ok(
        setup.secrets.includes('zl0y5CyySCPj8IqODV3Egjqgg6Q='),
        'the per-request signature is registered for masking',
      );
    });

    it('a new nonce and timestamp on every attempt (retries re-sign)', async () => {
      let failures = 1;
      const received = recordRequests(() => (failures-- > 0 ? { status: 503, body: 'busy' } : { body: [] }));
      let clock = 1000;
      let nonces = 0;
      setup = setupAuth({
        api: { authentication: { type: 'oauth10' } },
        authorization,
        runtime: { now: () => clock++, nonce: (n) => String(++nonces).padStart(n, 'a') },
      });
      await setup.client.send(setup.request('users'));
      const [first, second] = received.map((r) => header(r, 'authorization') ?? '');
      assert.match(first, /oauth_nonce="a{39}1".*oauth_timestamp="1000"/);
      assert.match(second, /oauth_nonce="a{39}2".*oauth_timestamp="1001"/);
      assert.notEqual(signature(first), signature(second));
    });

    it('missing credentials name what to set', () => {
      assert.throws(
        () => setupAuth({ api: { authentication: { type: 'oauth10' } } }),
        /authorization\.oauth_api\.credentials/,
      );
      assert.throws(
        () =>
          setupAuth({
            api: { authentication: { type: 'oauth10' } },
            authorization: { oauth_api: { credentials: { '#data': '{}', appKey: 'k' } } },
          }),
        /Missing '#appSecret'.*authorization\.oauth_api\.credentials\.#appSecret/,
      );
      assert.throws(
        () =>
          setupAuth({
            api: { authentication: { type: 'oauth10' } },
            authorization: {
              oauth_api: { credentials: { '#data': '{"oauth_token":"t"}', appKey: 'k', '#appSecret': 's' } },
            },
          }),
        /Missing 'oauth_token_secret'/,
      );
      assert.throws(
        () =>
          setupAuth({
            api: { authentication: { type: 'oauth10' } },
            authorization: { oauth_api: { credentials: { '#data': '{oops', appKey: 'k', '#appSecret': 's' } } },
          }),
        /not a valid JSON/,
      );
    });
  });
});
