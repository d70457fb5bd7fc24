import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import {
  startFixtureServer,
  type FixtureHandler,
  type FixtureServer,
  type RecordedRequest,
} from '../../support/fixture-server/fixture-server.js';
import { runAuthExtraction } from '../../support/auth-api.js';

/**
 * Every authentication method end to end: extract() on a data folder against a real local HTTP
 * server, asserting what the server received (raw request line, headers, body) and what was
 * written and logged.
 */
describe('authentication against a real server', () => {
  let server: FixtureServer;
  let handler: FixtureHandler;

  before(async () => {
    server = await startFixtureServer({ handler: (request) => handler(request) });
  });
  after(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  const USERS = [
    { id: 123, name: 'John Doe' },
    { id: 234, name: 'Jane Doe' },
  ];
  const lines = () => server.requests.map((r) => `${r.method} ${r.url}`);
  const headerOf = (r: RecordedRequest, name: string) => r.headers[name.toLowerCase()] as string | undefined;
  const api = (extra: Record<string, unknown>) => ({ baseUrl: `${server.url}/api/`, ...extra });
  const usersTable = '"id","name"\n"123","John Doe"\n"234","Jane Doe"\n';

  it('basic: every request carries the Authorization header; iterations use their own credentials (EX078, EX113)', async () => {
    handler = (r) =>
      headerOf(r, 'authorization')?.startsWith('Basic ') ? { body: USERS } : { status: 401, body: { message: 'no' } };
    const run = await runAuthExtraction({
      api: api({ authentication: { type: 'basic' } }),
      config: { outputBucket: 'b', jobs: [{ endpoint: 'users' }] },
      iterations: [
        { '#username': 'JohnDoe', '#password': 'secret' },
        { '#username': 'DoeJohn', '#password': 'zyxv9876' },
      ],
    });
    assert.deepEqual(
      server.requests.map((r) => headerOf(r, 'authorization')),
      [
        `Basic ${Buffer.from('JohnDoe:secret').toString('base64')}`,
        `Basic ${Buffer.from('DoeJohn:zyxv9876').toString('base64')}`,
      ],
    );
    assert.equal(run.files.get('b.users'), `${usersTable}"123","John Doe"\n"234","Jane Doe"\n`);
  });

  it('query: signed per request with the query context, the job query re-encoded (example 101)', async () => {
    handler = () => ({ body: USERS });
    await runAuthExtraction({
      api: api({
        authentication: {
          type: 'query',
          query: {
            apiToken: { attr: '#token' },
            signature: {
              function: 'sha1',
              args: [{ function: 'concat', args: [{ attr: '#token' }, { query: 'type' }] }],
            },
          },
        },
      }),
      config: {
        '#token': '1234abcd567efg890hij',
        outputBucket: 'b',
        jobs: [
          { endpoint: 'items', params: { type: 'users', since: '2017-04-19 12:46:46' } },
          { endpoint: 'items', params: { type: 'orders' }, dataType: 'orders' },
        ],
      },
    });
    assert.deepEqual(lines(), [
      'GET /api/items?type=users&since=2017-04-19%2012%3A46%3A46&apiToken=1234abcd567efg890hij&signature=d8221ab22e2a04e0a3a0b8818115864dd9b4bce4',
      'GET /api/items?type=orders&apiToken=1234abcd567efg890hij&signature=71875541aafb104f19db96dfb019406dfe68a627',
    ]);
  });

  describe('login', () => {
    const TOKEN = 'a1b2c3d435f6';
    const loginHandler: FixtureHandler = (r) => {
      if (r.url === '/api/login')
        return headerOf(r, 'x-login') === 'JohnDoe'
          ? { body: { authorization: { token: TOKEN } } }
          : { status: 403, body: {} };
      if (r.url.startsWith('/api/users') || r.url.startsWith('/api/orders'))
        return headerOf(r, 'x-apitoken') === TOKEN ? { body: USERS } : { status: 401, body: {} };
      return undefined;
    };
    const authentication = (extra: Record<string, unknown> = {}) => ({
      type: 'login',
      loginRequest: {
        endpoint: 'login',
        method: 'GET',
        headers: { 'X-Login': 'JohnDoe', 'X-Password': { attr: '#password' } },
      },
      apiRequest: { headers: { 'X-ApiToken': { response: 'authorization.token' } } },
      ...extra,
    });

    it('logs in once, lazily, before the first request of the configuration', async () => {
      handler = loginHandler;
      const run = await runAuthExtraction({
        api: api({ authentication: authentication() }),
        config: { '#password': 'TopSecret', outputBucket: 'b', jobs: [{ endpoint: 'users' }, { endpoint: 'orders' }] },
      });
      assert.deepEqual(lines(), ['GET /api/login', 'GET /api/users', 'GET /api/orders']);
      assert.equal(headerOf(server.requests[0], 'x-password'), 'TopSecret');
      assert.equal(run.files.get('b.users'), usersTable);
      assert.match(run.logs, /Logged in \(login authentication, GET http:\/\/127\.0\.0\.1:\d+\/api\/login\)/);
    });

    it('expires -1: a login before every request (EX082)', async () => {
      handler = loginHandler;
      await runAuthExtraction({
        api: api({ authentication: authentication({ expires: '-1' }) }),
        config: { '#password': 'TopSecret', outputBucket: 'b', jobs: [{ endpoint: 'users' }, { endpoint: 'orders' }] },
      });
      assert.deepEqual(lines(), ['GET /api/login', 'GET /api/users', 'GET /api/login', 'GET /api/orders']);
    });

    it('logs in again for every iteration (new client), with that iteration’s attributes', async () => {
      handler = (r) =>
        r.url.startsWith('/api/login') ? { body: { authorization: { token: `tok-${r.body}` } } } : { body: USERS };
      await runAuthExtraction({
        api: api({
          authentication: {
            type: 'login',
            loginRequest: { endpoint: 'login', method: 'FORM', params: { user: { attr: 'account' } } },
            apiRequest: { query: { token: 'authorization.token' } },
          },
        }),
        config: { outputBucket: 'b', jobs: [{ endpoint: 'users' }] },
        iterations: [{ account: 'one' }, { account: 'two' }],
      });
      assert.deepEqual(
        server.requests.map((r) => `${r.method} ${r.url} ${r.body}`),
        [
          'POST /api/login user=one',
          'GET /api/users?token=tok-user%3Done ',
          'POST /api/login user=two',
          'GET /api/users?token=tok-user%3Dtwo ',
        ],
      );
    });

    it('a retried request re-runs the auth: with -1 the login is repeated per attempt', async () => {
      let failures = 1;
      handler = (r) => (r.url === '/api/users' && failures-- > 0 ? { status: 503, body: {} } : loginHandler(r));
      const run = await runAuthExtraction({
        api: api({ authentication: authentication({ expires: -1 }), retryConfig: { backoffBase: 0.001 } }),
        config: { '#password': 'TopSecret', outputBucket: 'b', jobs: [{ endpoint: 'users' }] },
      });
      assert.deepEqual(lines(), ['GET /api/login', 'GET /api/users', 'GET /api/login', 'GET /api/users']);
      assert.equal(run.result.retries, 1);
    });

    it('the token obtained at run time never appears in the logs, with or without the run’s masker', async () => {
      // the API echoes the session token in its records and a child job puts it in its endpoint,
      // so the token would be logged with the child job's name
      handler = (r) => {
        if (r.url === '/api/login') return { body: { authorization: { token: TOKEN } } };
        if (r.url === '/api/users') return { body: [{ id: 7, session: TOKEN }] };
        return { body: [{ ok: 1 }] };
      };
      const parameters = {
        api: api({ authentication: authentication() }),
        config: {
          '#password': 'TopSecret',
          outputBucket: 'b',
          jobs: [
            {
              endpoint: 'users',
              children: [{ endpoint: 'session/{session}', dataType: 'detail', placeholders: { session: 'session' } }],
            },
          ],
        },
      };
      for (const passMasker of [true, false]) {
        server.requests.length = 0;
        const run = await runAuthExtraction(parameters, { passMasker });
        assert.ok(lines().includes(`GET /api/session/${TOKEN}`), 'the child request was made');
        assert.match(run.logs, /session\/\[hidden\]/, `masked (passMasker=${passMasker})`);
        assert.ok(!run.logs.includes(TOKEN), `the token is not in the logs (passMasker=${passMasker})`);
        assert.ok(run.files.get('b.detail')?.includes(TOKEN), 'data is not masked');
        if (passMasker) assert.equal(run.mask(`x ${TOKEN} y`), 'x [hidden] y', 'registered in the run’s masker');
      }
    });

    it('a failed login fails the run with a user error and sends no API request', async () => {
      handler = loginHandler;
      await assert.rejects(
        runAuthExtraction({
          api: api({ authentication: { ...authentication(), loginRequest: { endpoint: 'login' } } }),
          config: { outputBucket: 'b', jobs: [{ endpoint: 'users' }] },
        }),
        (e: Error) => e.name === 'UserError' && /login request failed: \[403\]/.test(e.message),
      );
      assert.deepEqual(lines(), ['GET /api/login']);
    });
  });

  it('oauth10: the server verifies the HMAC-SHA1 signature independently (RFC 5849)', async () => {
    const consumerSecret = 'TopSecret';
    const tokenSecret = 'tokenSecret';
    const enc = (s: string) =>
      encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    const verify = (r: RecordedRequest): boolean => {
      const value = headerOf(r, 'authorization') ?? '';
      const oauth = [...value.matchAll(/(\w+)="([^"]*)"/g)].map(
        ([, k, v]) => [k, decodeURIComponent(v)] as [string, string],
      );
      const signature = oauth.find(([k]) => k === 'oauth_signature')?.[1];
      const url = new URL(r.url, server.url);
      const params = [...oauth.filter(([k]) => k !== 'oauth_signature'), ...url.searchParams]
        .map(([k, v]) => [enc(k), enc(v)])
        .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : 1))
        .map(([k, v]) => `${k}=${v}`)
        .join('&');
      const base = `${r.method}&${enc(`${server.url}${url.pathname}`)}&${enc(params)}`;
      return (
        signature ===
        createHmac('sha1', `${enc(consumerSecret)}&${enc(tokenSecret)}`)
          .update(base)
          .digest('base64')
      );
    };
    handler = (r) => (verify(r) ? { body: USERS } : { status: 401, body: { message: 'bad signature' } });
    const run = await runAuthExtraction(
      {
        api: api({ authentication: { type: 'oauth10' } }),
        config: { outputBucket: 'b', jobs: [{ endpoint: 'users', params: { q: "a b~*'", page: 1 } }] },
      },
      {
        authorization: {
          oauth_api: {
            credentials: {
              '#data': JSON.stringify({ oauth_token: 'userToken', oauth_token_secret: tokenSecret }),
              appKey: 1234,
              '#appSecret': consumerSecret,
            },
          },
        },
        authRuntime: { now: () => 1492904452, nonce: () => '72469d96572dabb4d0ea02b057ea4f246d722b72' },
      },
    );
    assert.equal(server.requests.length, 1);
    assert.equal(server.requests[0].url, '/api/users?q=a+b%7E%2A%27&page=1', 'oauth10 does not touch the URL');
    assert.match(
      headerOf(server.requests[0], 'authorization') ?? '',
      /oauth_nonce="72469d96572dabb4d0ea02b057ea4f246d722b72".*oauth_timestamp="1492904452"/,
    );
    assert.equal(run.files.get('b.users'), usersTable);
  });

  it('oauth20: Bearer token from #data (text) and a query token from JSON data', async () => {
    handler = (r) =>
      headerOf(r, 'authorization') === 'Bearer SomeToken1234abcd567ef' ? { body: USERS } : { status: 401, body: {} };
    const bearer = await runAuthExtraction(
      {
        api: api({
          authentication: {
            type: 'oauth20',
            headers: { Authorization: { function: 'concat', args: ['Bearer ', { authorization: 'data' }] } },
          },
        }),
        config: { outputBucket: 'b', jobs: [{ endpoint: 'users' }] },
      },
      {
        authorization: {
          oauth_api: { credentials: { '#data': 'SomeToken1234abcd567ef', appKey: 'id', '#appSecret': 'secret' } },
        },
      },
    );
    assert.equal(bearer.files.get('b.users'), usersTable);

    server.requests.length = 0;
    handler = () => ({ body: USERS });
    await runAuthExtraction(
      {
        api: api({
          authentication: {
            type: 'oauth20',
            format: 'json',
            query: { access_token: { authorization: 'data.access_token' } },
          },
        }),
        config: { outputBucket: 'b', jobs: [{ endpoint: 'users', params: { from: '2024-01-01 00:00' } }] },
      },
      {
        authorization: {
          oauth_api: { credentials: { '#data': '{"access_token":"testToken"}', appKey: 'id', '#appSecret': 'secret' } },
        },
      },
    );
    assert.deepEqual(lines(), ['GET /api/users?from=2024-01-01%2000%3A00&access_token=testToken']);
  });

  it('oauth20.login: FORM token request from consumer/user contexts, access token in the query (EX114)', async () => {
    handler = (r) => {
      if (r.url === '/api/token') return { body: { access_token: 'mkoijn098uhbygv' } };
      if (r.url === '/api/reports?access_token=mkoijn098uhbygv') return { body: { rows: [['2017-01-01', 'x', 1]] } };
      return undefined;
    };
    const run = await runAuthExtraction(
      {
        api: api({
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
        }),
        config: { outputBucket: 'adsense', jobs: [{ endpoint: 'reports', dataField: 'rows', dataType: 'rows' }] },
      },
      {
        authorization: {
          oauth_api: {
            credentials: {
              '#data': '{"access_token": "abcd01234","refresh_token": "efgh56789"}',
              appKey: 'clientId1234asdf',
              '#appSecret': 'clientSecret5678ghjk',
            },
          },
        },
      },
    );
    assert.deepEqual(
      server.requests.map((r) => `${r.method} ${r.url} ${r.body}`),
      [
        'POST /api/token client_id=clientId1234asdf&client_secret=clientSecret5678ghjk&refresh_token=efgh56789&grant_type=refresh_token',
        'GET /api/reports?access_token=mkoijn098uhbygv ',
      ],
    );
    assert.ok(run.files.has('adsense.rows'));
    assert.ok(!run.logs.includes('mkoijn098uhbygv'));
  });

  it('an unknown authentication type is refused before anything is sent', async () => {
    handler = () => ({ body: USERS });
    await assert.rejects(
      runAuthExtraction({
        api: api({ authentication: { type: 'kerberos' } }),
        config: { outputBucket: 'b', jobs: [{ endpoint: 'users' }] },
      }),
      (e: Error) => e.name === 'ConfigError' && /parameters\.api\.authentication\.type/.test(e.message),
    );
    assert.equal(server.requests.length, 0);
  });
});
