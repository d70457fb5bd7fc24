import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import nock from 'nock';
import {
  fakeRuntime,
  header,
  ORIGIN,
  recordRequests,
  setupAuth,
  type AuthSetup,
  type Responder,
} from '../../support/auth-setup.js';

const TOKEN = 'a1b2c3d435f6';
const loginHeaders = { 'X-Login': 'JohnDoe', 'X-Password': 'TopSecret' };

/** login → {"authorization": {"token": …}}, anything else → a list */
const loginServer =
  (loginBody: unknown = { authorization: { token: TOKEN } }, status = 200): Responder =>
  (request) =>
    request.path.startsWith('/api/login') || request.path.startsWith('/auth/')
      ? { status, body: loginBody }
      : { body: [{ id: 1 }] };

describe('auth: login', () => {
  let setup: AuthSetup | undefined;
  const setups: AuthSetup[] = [];
  afterEach(() => {
    for (const s of setups.splice(0)) s.close();
    setup?.close();
    setup = undefined;
    nock.cleanAll();
  });

  function login(
    authentication: Record<string, unknown>,
    extra: {
      api?: Record<string, unknown>;
      config?: Record<string, unknown>;
      runtime?: ReturnType<typeof fakeRuntime>;
    } = {},
  ) {
    setup = setupAuth({
      api: {
        authentication: {
          type: 'login',
          loginRequest: { endpoint: 'login', headers: loginHeaders },
          ...authentication,
        },
        ...extra.api,
      },
      config: extra.config,
      runtime: extra.runtime,
      retry: { backoffBaseMs: 1 },
    });
    setups.push(setup);
    return setup;
  }

  it('logs in lazily, right before the first request, through the same client but without the login auth (EX079)', async () => {
    const received = recordRequests(loginServer());
    const { client, request } = login(
      { apiRequest: { headers: { 'X-ApiToken': { response: 'authorization.token' } } } },
      { api: { http: { headers: { 'X-Client': 'gex-test' } } } },
    );
    assert.equal(received.length, 0, 'nothing is sent before the first API request');
    await client.send(request('users'));
    await client.send(request('orders'));
    assert.deepEqual(
      received.map((r) => `${r.method} ${r.path}`),
      ['GET /api/login', 'GET /api/users', 'GET /api/orders'],
    );
    const [loginRequest, users, orders] = received;
    assert.equal(header(loginRequest, 'x-login'), 'JohnDoe');
    assert.equal(header(loginRequest, 'x-password'), 'TopSecret');
    assert.equal(header(loginRequest, 'x-client'), 'gex-test', 'client headers apply to the login request');
    assert.equal(header(loginRequest, 'x-apitoken'), undefined, 'the login request bypasses the login auth');
    assert.equal(header(users, 'x-apitoken'), TOKEN);
    assert.equal(header(orders, 'x-apitoken'), TOKEN);
  });

  it('FORM login to an absolute endpoint; query values from paths into lists (EX080)', async () => {
    const received = recordRequests((r) =>
      r.path === '/other/login/form'
        ? { body: { authentication: [{ secret: TOKEN }, { token: { id: 123 } }] } }
        : { body: [] },
    );
    setup = setupAuth({
      api: {
        authentication: {
          type: 'login',
          loginRequest: {
            endpoint: `${ORIGIN}/other/login/form`,
            method: 'FORM',
            params: { username: 'JohnDoe', password: 'TopSecret' },
          },
          apiRequest: {
            query: {
              secretKey: { response: 'authentication.0.secret' },
              tokenId: { response: 'authentication.1.token.id' },
            },
          },
        },
      },
    });
    await setup.client.send(setup.request('users'));
    assert.deepEqual(
      received.map((r) => `${r.method} ${r.path}`),
      ['POST /other/login/form', `GET /api/users?secretKey=${TOKEN}&tokenId=123`],
    );
    assert.equal(received[0].body, 'username=JohnDoe&password=TopSecret');
    assert.equal(header(received[0], 'content-type'), 'application/x-www-form-urlencoded');
  });

  it('no defaultOptions on the login request; login values beat defaults and merge duplicate query keys (EX081)', async () => {
    const received = recordRequests((r) =>
      r.path === '/api/login'
        ? { body: { authorization: { token: 987654, secretKey: TOKEN, accountId: 'abc' } } }
        : { body: [] },
    );
    setup = setupAuth({
      api: {
        http: {
          defaultOptions: {
            headers: { 'X-Mode': 'development', 'X-Account-Id': 123 },
            params: { debug: '1', orderBy: 'default', secretKey: '123' },
          },
        },
        authentication: {
          type: 'login',
          loginRequest: { endpoint: 'login', method: 'POST', params: { username: 'JohnDoe', password: 'TopSecret' } },
          apiRequest: {
            query: {
              apiToken: 'authorization.token',
              secretKey: 'authorization.secretKey',
              customerId: 'authorization.accountId',
            },
            headers: { 'X-SecretKey': 'authorization.secretKey', 'X-Account-Id': 'authorization.accountId' },
          },
        },
      },
    });
    await setup.client.send(setup.request('users', { orderBy: 'userName', secretKey: 'none', customerId: '234' }));
    const [loginRequest, users] = received;
    assert.equal(loginRequest.path, '/api/login');
    assert.equal(loginRequest.body, '{"username":"JohnDoe","password":"TopSecret"}');
    assert.equal(header(loginRequest, 'x-mode'), undefined);
    assert.equal(
      users.path,
      '/api/users?debug=1&orderBy=userName&apiToken=987654&secretKey%5B0%5D=none&secretKey%5B1%5D=a1b2c3d435f6&customerId%5B0%5D=234&customerId%5B1%5D=abc',
    );
    assert.equal(header(users, 'x-account-id'), 'abc');
    assert.equal(header(users, 'x-secretkey'), TOKEN);
    assert.equal(header(users, 'x-mode'), 'development');
  });

  it('apiRequest values are tried as paths (EX100) and may be functions of the response (EX118); login params/headers see attr', async () => {
    const token = 'd868d581b2f2edd09e8e7ce12c00723b3fcffb6a5d74c40eae9d94181a0bf731';
    const received = recordRequests((r) =>
      r.path === '/api/auth' ? { body: { token, authorization: { token } } } : { body: [] },
    );
    setup = setupAuth({
      api: {
        authentication: {
          type: 'login',
          loginRequest: {
            endpoint: 'auth',
            headers: {
              'X-Authorization': {
                function: 'base64_encode',
                args: [{ function: 'concat', args: [{ attr: '#login' }, ':', { attr: '#password' }] }],
              },
            },
          },
          apiRequest: {
            headers: {
              'X-Api-Token': 'token',
              'X-Hash': { function: 'sha1', args: [{ response: 'authorization.token' }] },
              'X-Const': 'not.a.path',
            },
          },
        },
      },
      config: { '#login': 'JohnDoe', '#password': 'TopSecret' },
    });
    await setup.client.send(setup.request('users'));
    assert.equal(header(received[0], 'x-authorization'), 'Sm9obkRvZTpUb3BTZWNyZXQ=');
    assert.equal(header(received[1], 'x-api-token'), token);
    assert.equal(header(received[1], 'x-hash'), 'a614a901d63e299c6f201a100f73cf0426d6271d');
    assert.equal(header(received[1], 'x-hash'), createHash('sha1').update(token).digest('hex'));
    assert.equal(header(received[1], 'x-const'), 'not.a.path');
    assert.ok(setup.secrets.includes(token), 'the login token is registered for masking');
    assert.ok(
      setup.secrets.includes('a614a901d63e299c6f201a100f73cf0426d6271d'),
      'a value computed from the response too',
    );
    assert.ok(!setup.secrets.includes('not.a.path'), 'a literal of the configuration is not a secret');
  });

  it('format text: the body is {"data": body} (EX128)', async () => {
    const received = recordRequests((r) => (r.path === '/api/login' ? { body: TOKEN } : { body: [] }));
    const { client, request } = login({
      format: 'text',
      apiRequest: { headers: { 'X-ApiToken': { response: 'data' } } },
    });
    await client.send(request('users'));
    assert.equal(header(received[1], 'x-apitoken'), TOKEN);
  });

  it('format json: a scalar response becomes {"data": value} (EX129); a list is a user error', async () => {
    const received = recordRequests((r) => (r.path === '/api/login' ? { body: JSON.stringify(TOKEN) } : { body: [] }));
    const { client, request } = login({ apiRequest: { headers: { 'X-ApiToken': 'data' } } });
    await client.send(request('users'));
    assert.equal(header(received[1], 'x-apitoken'), TOKEN);
    nock.cleanAll();
    setup?.close();
    recordRequests(loginServer([{ token: TOKEN }]));
    const listLogin = login({ apiRequest: { headers: { 'X-ApiToken': 'data' } } });
    await assert.rejects(
      listLogin.client.send(listLogin.request('users')),
      /login request should be an object or a scalar value, given "array"/,
    );
  });

  it('a failed login is a user error and no API request is sent', async () => {
    const received = recordRequests(loginServer({ message: 'bad password' }, 401));
    const { client, request } = login({ apiRequest: { headers: { 'X-ApiToken': 'authorization.token' } } });
    await assert.rejects(
      client.send(request('users')),
      (e: Error) => e.name === 'UserError' && /login request failed: \[401\].*bad password/.test(e.message),
    );
    assert.deepEqual(
      received.map((r) => r.path),
      ['/api/login'],
    );
  });

  it('a header value that is an object is a user error', async () => {
    recordRequests(loginServer());
    const { client, request } = login({ apiRequest: { headers: { 'X-ApiToken': 'authorization' } } });
    await assert.rejects(
      client.send(request('users')),
      /apiRequest\.headers\.X-ApiToken: invalid type "object" in headers/,
    );
  });

  describe('expiry', () => {
    const paths = (received: Array<{ path: string }>) => received.map((r) => r.path.replace('/api/', ''));

    it('"-1" logs in before every request (EX082)', async () => {
      const received = recordRequests(loginServer());
      const runtime = fakeRuntime();
      const { client, request } = login(
        { expires: '-1', apiRequest: { headers: { 'X-ApiToken': { response: 'authorization.token' } } } },
        { runtime },
      );
      await client.send(request('users'));
      await client.send(request('orders'));
      assert.deepEqual(paths(received), ['login', 'users', 'login', 'orders']);
    });

    it('whole seconds: expires 0 re-logs in only once the clock second has advanced', async () => {
      const received = recordRequests(loginServer());
      const runtime = fakeRuntime();
      const { client, request } = login({ expires: 0 }, { runtime });
      await client.send(request('a'));
      await client.send(request('b'));
      runtime.tick();
      await client.send(request('c'));
      assert.deepEqual(paths(received), ['login', 'a', 'b', 'login', 'c']);
    });

    it('expires N seconds: valid while now <= login time + N', async () => {
      const received = recordRequests(loginServer());
      const runtime = fakeRuntime();
      const { client, request } = login({ expires: 10 }, { runtime });
      await client.send(request('a'));
      runtime.tick(10);
      await client.send(request('b'));
      runtime.tick(1);
      await client.send(request('c'));
      assert.deepEqual(paths(received), ['login', 'a', 'b', 'login', 'c']);
    });

    it('expiry from the response: relative seconds (EX084), a date (strtotime), in the past = user error', async () => {
      let body: unknown = { authorization: { token: TOKEN, expires: 5 } };
      const received = recordRequests((r) => (r.path === '/api/login' ? { body } : { body: [] }));
      const runtime = fakeRuntime(Date.UTC(2024, 0, 1, 12, 0, 0) / 1000);
      const relative = login({ expires: { response: 'authorization.expires', relative: true } }, { runtime });
      await relative.client.send(relative.request('a'));
      runtime.tick(5);
      await relative.client.send(relative.request('b'));
      runtime.tick(1);
      await relative.client.send(relative.request('c'));
      assert.deepEqual(paths(received), ['login', 'a', 'b', 'login', 'c']);

      received.length = 0;
      body = { authorization: { token: TOKEN, expires: '2024-01-01 13:00:00' } };
      const dated = login({ expires: { response: 'authorization.expires' } }, { runtime });
      await dated.client.send(dated.request('a'));
      runtime.tick(3600 - 6);
      await dated.client.send(dated.request('b'));
      body = { authorization: { token: TOKEN, expires: '2024-01-01 14:00:00' } };
      runtime.tick(1);
      await dated.client.send(dated.request('c'));
      assert.deepEqual(paths(received), ['login', 'a', 'b', 'login', 'c']);

      body = { authorization: { token: TOKEN, expires: '2020-01-01 00:00:00' } };
      const past = login({ expires: { response: 'authorization.expires' } }, { runtime });
      await assert.rejects(
        past.client.send(past.request('a')),
        /expiry time before current time: '2020-01-01 00:00:00'/,
      );
    });
  });

  describe('retries', () => {
    it('a retried request keeps the login; with -1 every attempt logs in again (auth runs per attempt)', async () => {
      let failures = 1;
      const received = recordRequests((r) => {
        if (r.path === '/api/login') return { body: { authorization: { token: TOKEN } } };
        return failures-- > 0 ? { status: 503, body: 'busy' } : { body: [] };
      });
      const kept = login({ apiRequest: { headers: { 'X-ApiToken': 'authorization.token' } } });
      const response = await kept.client.send(kept.request('users'));
      assert.equal(response.attempts, 2);
      assert.deepEqual(
        received.map((r) => r.path),
        ['/api/login', '/api/users', '/api/users'],
      );
      assert.equal(header(received[2], 'x-apitoken'), TOKEN);

      received.length = 0;
      failures = 1;
      const always = login(
        { expires: -1, apiRequest: { headers: { 'X-ApiToken': 'authorization.token' } } },
        { runtime: fakeRuntime() },
      );
      await always.client.send(always.request('users'));
      assert.deepEqual(
        received.map((r) => r.path),
        ['/api/login', '/api/users', '/api/login', '/api/users'],
      );
    });

    it('the login request itself is retried by the client', async () => {
      let failures = 2;
      const received = recordRequests((r) =>
        r.path === '/api/login' && failures-- > 0 ? { status: 500, body: 'oops' } : loginServer()(r),
      );
      const { client, request, waits } = login({ apiRequest: { headers: { 'X-ApiToken': 'authorization.token' } } });
      await client.send(request('users'));
      assert.deepEqual(
        received.map((r) => r.path),
        ['/api/login', '/api/login', '/api/login', '/api/users'],
      );
      assert.equal(waits.length, 2);
    });
  });

  it('configuration errors name what to set', () => {
    const make = (authentication: Record<string, unknown>) => () =>
      setupAuth({ api: { authentication: { type: 'login', ...authentication } } });
    assert.throws(make({}), /'loginRequest' is not configured.*parameters\.api\.authentication\.loginRequest/);
    assert.throws(make({ loginRequest: { method: 'GET' } }), /Request endpoint must be set.*loginRequest\.endpoint/);
    assert.throws(
      make({ loginRequest: { endpoint: 'login' }, format: 'xml' }),
      /'format' must be either 'json' or 'text'/,
    );
    assert.throws(
      make({ loginRequest: { endpoint: 'login' }, expires: 'soon' }),
      /'expires' attribute must be either an integer or an array with 'response'/,
    );
    assert.throws(make({ loginRequest: { endpoint: 'login' }, expires: { relative: true } }), /'expires' attribute/);
    assert.doesNotThrow(make({ loginRequest: { endpoint: 'login' }, expires: '-1' }));
  });
});
