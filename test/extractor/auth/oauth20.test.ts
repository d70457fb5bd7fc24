import assert from 'node:assert/strict';
import nock from 'nock';
import { header, recordRequests, setupAuth, type AuthSetup } from '../../support/auth-setup.js';

const credentials = (data: string, appKey = 'clientId', secret = 'clientSecret') => ({
  oauth_api: { credentials: { '#data': data, appKey, '#appSecret': secret } },
});

describe('auth: oauth20', () => {
  let setup: AuthSetup | undefined;
  afterEach(() => {
    setup?.close();
    setup = undefined;
    nock.cleanAll();
  });

  it('format text: #data is the token (EX103 Bearer)', async () => {
    const received = recordRequests();
    setup = setupAuth({
      api: {
        authentication: {
          type: 'oauth20',
          headers: { Authorization: { function: 'concat', args: ['Bearer ', { authorization: 'data' }] } },
        },
      },
      authorization: credentials('SomeToken1234abcd567ef'),
    });
    await setup.client.send(setup.request('users'));
    assert.equal(header(received[0], 'authorization'), 'Bearer SomeToken1234abcd567ef');
    assert.equal(received[0].path, '/api/users');
  });

  it('format json: data.* flattened; the query is merged into every request (re-encoded)', async () => {
    const received = recordRequests();
    setup = setupAuth({
      api: {
        authentication: {
          type: 'oauth20',
          format: 'json',
          query: { access_token: { authorization: 'data.access_token' }, client: { authorization: 'clientId' } },
        },
      },
      authorization: credentials('{"access_token": "tok en~1", "nested": {"x": "y"}}'),
    });
    await setup.client.send(setup.request('users', { q: 'a b', access_token: 'job' }));
    assert.equal(received[0].path, '/api/users?q=a%20b&access_token=tok%20en~1&client=clientId');
    assert.ok(setup.secrets.includes('tok en~1'), 'tokens of #data are registered for masking');
  });

  it('the query is re-encoded even with no auth query configured (merged always)', async () => {
    const received = recordRequests();
    setup = setupAuth({ api: { authentication: { type: 'oauth20' } }, authorization: credentials('t0ken-value') });
    await setup.client.send(setup.request('users', { since: '2017-04-19 12:46:46' }));
    assert.equal(received[0].path, '/api/users?since=2017-04-19%2012%3A46%3A46');
  });

  it('reproduces the recorded EX104 MAC header with its nonce and timestamp (request context: method, resource, hostname, port)', async () => {
    const received = recordRequests();
    const lines = [
      { authorization: 'timestamp' },
      { authorization: 'nonce' },
      { request: 'method' },
      { request: 'resource' },
      { request: 'hostname' },
      { request: 'port' },
      '\n',
    ];
    setup = setupAuth({
      api: {
        baseUrl: 'http://api.test:80/104-oauth2-hmac/',
        authentication: {
          type: 'oauth20',
          format: 'json',
          headers: {
            Authorization: {
              function: 'concat',
              args: [
                'MAC id="',
                { authorization: 'data.access_token' },
                '", ts="',
                { authorization: 'timestamp' },
                '", nonce="',
                { authorization: 'nonce' },
                '", mac="',
                {
                  function: 'md5',
                  args: [
                    {
                      function: 'hash_hmac',
                      args: [
                        'sha256',
                        { function: 'implode', args: ['\n', lines] },
                        { authorization: 'data.mac_secret' },
                      ],
                    },
                  ],
                },
              ],
            },
          },
        },
      },
      authorization: credentials('{"status": "ok","access_token": "testToken", "mac_secret": "iAreSoSecret123"}'),
      runtime: { now: () => 1492958193, nonce: (n) => '605cce2a2f687253'.slice(0, n) },
    });
    // GE signed http://mock-server/104-oauth2-hmac/users (hostname mock-server, port 80)
    const request = { ...setup.request('users'), url: 'http://mock-server/104-oauth2-hmac/users' };
    const signed = await setup.auth.beforeRequest(request, setup.client.sendUnauthenticated);
    assert.equal(
      signed.headers.find(([n]) => n === 'Authorization')?.[1],
      'MAC id="testToken", ts="1492958193", nonce="605cce2a2f687253", mac="ae96f93def8f02770f30e858e074b2a7',
    );
    await setup.client.send(setup.request('users'));
    assert.match(
      header(received[0], 'authorization') ?? '',
      /^MAC id="testToken", ts="1492958193", nonce="605cce2a2f687253", mac="[0-9a-f]{32}$/,
    );
  });

  it('nonce (16 hex) and timestamp are fresh on every attempt', async () => {
    let failures = 1;
    const received = recordRequests(() => (failures-- > 0 ? { status: 503, body: 'busy' } : { body: [] }));
    let clock = 50;
    setup = setupAuth({
      api: {
        authentication: {
          type: 'oauth20',
          headers: {
            'X-Sig': { function: 'concat', args: [{ authorization: 'nonce' }, '/', { authorization: 'timestamp' }] },
          },
        },
      },
      authorization: credentials('token-text'),
      runtime: { now: () => clock++ },
    });
    await setup.client.send(setup.request('users'));
    const values = received.map((r) => header(r, 'x-sig') ?? '');
    assert.equal(values.length, 2);
    assert.match(values[0], /^[0-9a-f]{16}\/50$/);
    assert.match(values[1], /^[0-9a-f]{16}\/51$/);
    assert.notEqual(values[0].split('/')[0], values[1].split('/')[0]);
  });

  it('a header that evaluates to an object is a user error', async () => {
    recordRequests();
    setup = setupAuth({
      api: { authentication: { type: 'oauth20', headers: { 'X-A': { a: { b: 1 } } } } },
      authorization: credentials('t'),
    });
    await assert.rejects(
      setup.client.send(setup.request('users')),
      /authentication\.headers\.X-A: invalid type "object" in headers/,
    );
  });

  it('credential and format errors name what to set', () => {
    assert.throws(
      () => setupAuth({ api: { authentication: { type: 'oauth20' } } }),
      /OAuth API credentials not supplied.*authorization\.oauth_api\.credentials/,
    );
    assert.throws(
      () =>
        setupAuth({
          api: { authentication: { type: 'oauth20' } },
          authorization: { oauth_api: { credentials: { appKey: 'k', '#appSecret': 's' } } },
        }),
      /Missing '#data'.*authorization\.oauth_api\.credentials\.#data/,
    );
    assert.throws(
      () => setupAuth({ api: { authentication: { type: 'oauth20', format: 'xml' } }, authorization: credentials('t') }),
      /Unknown OAuth data format 'xml'/,
    );
    assert.throws(
      () =>
        setupAuth({
          api: { authentication: { type: 'oauth20', format: 'json' } },
          authorization: credentials('not json'),
        }),
      /OAuth data is not a valid JSON/,
    );
  });
});

describe('auth: oauth20.login', () => {
  let setup: AuthSetup | undefined;
  afterEach(() => {
    setup?.close();
    setup = undefined;
    nock.cleanAll();
  });

  it('login request headers from consumer and user contexts, token into a header (EX105)', async () => {
    const received = recordRequests((r) =>
      r.path === '/api/token' ? { body: { access_token: 'mkoijn098uhbygv' } } : { body: [] },
    );
    setup = setupAuth({
      api: {
        authentication: {
          type: 'oauth20.login',
          loginRequest: {
            endpoint: 'token',
            headers: { 'X-Refresh-Token': { user: 'refresh_token' }, 'X-App-Key': { consumer: 'client_id' } },
          },
          apiRequest: { headers: { 'X-Access-Token': { response: 'access_token' } } },
        },
      },
      authorization: credentials('{"refresh_token": "1234abcd5678efgh"}', 'someId', 'someSecret'),
    });
    await setup.client.send(setup.request('users'));
    assert.deepEqual(
      received.map((r) => r.path),
      ['/api/token', '/api/users'],
    );
    assert.equal(header(received[0], 'x-refresh-token'), '1234abcd5678efgh');
    assert.equal(header(received[0], 'x-app-key'), 'someId');
    assert.equal(header(received[1], 'x-access-token'), 'mkoijn098uhbygv');
    assert.ok(setup.secrets.includes('mkoijn098uhbygv'));
    assert.ok(setup.secrets.includes('1234abcd5678efgh'), 'the refresh token of #data is registered too');
  });

  it('FORM token request, access token into the query (EX114)', async () => {
    const received = recordRequests((r) =>
      r.path === '/api/token' ? { body: { access_token: 'mkoijn098uhbygv' } } : { body: {} },
    );
    setup = setupAuth({
      api: {
        authentication: {
          type: 'oauth20.login',
          loginRequest: {
            endpoint: 'token',
            method: 'FORM',
            params: {
              client_id: { consumer: 'client_id' },
              client_secret: { consumer: 'client_secret' },
              refresh_token: { user: 'refresh_token' },
              grant_type: 'refresh_token',
            },
          },
          apiRequest: { query: { access_token: { response: 'access_token' } } },
        },
      },
      authorization: credentials(
        '{"access_token": "abcd01234","refresh_token": "efgh56789"}',
        'clientId1234asdf',
        'clientSecret5678ghjk',
      ),
    });
    await setup.client.send(setup.request('reports'));
    assert.deepEqual(
      received.map((r) => `${r.method} ${r.path}`),
      ['POST /api/token', 'GET /api/reports?access_token=mkoijn098uhbygv'],
    );
    assert.equal(
      received[0].body,
      'client_id=clientId1234asdf&client_secret=clientSecret5678ghjk&refresh_token=efgh56789&grant_type=refresh_token',
    );
  });

  it('#data must be a JSON object', () => {
    const authentication = { type: 'oauth20.login', loginRequest: { endpoint: 'token' } };
    assert.throws(() => setupAuth({ api: { authentication }, authorization: credentials('{bad') }), /not a valid JSON/);
    assert.throws(
      () => setupAuth({ api: { authentication }, authorization: credentials('"just a string"') }),
      /must be a JSON object/,
    );
  });
});
