import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import nock from 'nock';
import { header, recordRequests, setupAuth, type AuthSetup } from '../../support/auth-setup.js';

describe('auth: basic', () => {
  let setup: AuthSetup | undefined;
  afterEach(() => {
    setup?.close();
    setup = undefined;
    nock.cleanAll();
  });

  it('sends Authorization: Basic base64(#username:#password) and replaces a configured one (EX078)', async () => {
    const received = recordRequests();
    setup = setupAuth({
      api: { authentication: { type: 'basic' }, http: { headers: { authorization: 'Bearer configured' } } },
      config: { '#username': 'JohnDoe', '#password': 'secret' },
    });
    await setup.client.send(setup.request('users', {}, 'GET', { AUTHORIZATION: 'job value' }));
    assert.equal(received.length, 1);
    assert.equal(received[0].path, '/api/users');
    assert.equal(header(received[0], 'authorization'), 'Basic Sm9obkRvZTpzZWNyZXQ=');
    assert.ok(
      setup.secrets.includes('JohnDoe:secret'),
      'the pair whose base64 is the header is registered for masking',
    );
  });

  it('prefers username/password over #username/#password and leaves the URL untouched', async () => {
    const received = recordRequests();
    setup = setupAuth({
      api: { authentication: { type: 'basic' } },
      config: { username: 'plain', '#username': 'hashed', password: 'pw', '#password': 'hpw' },
    });
    await setup.client.send(setup.request('users', { q: 'a b~' }));
    assert.equal(header(received[0], 'authorization'), `Basic ${Buffer.from('plain:pw').toString('base64')}`);
    assert.equal(received[0].path, '/api/users?q=a+b%7E');
  });

  it('missing credentials are user errors naming what to set', () => {
    assert.throws(
      () => setupAuth({ api: { authentication: { type: 'basic' } }, config: { '#password': 'x' } }),
      /Missing the required '#username'.*parameters\.config\.#username/,
    );
    assert.throws(
      () => setupAuth({ api: { authentication: { type: 'basic' } }, config: { username: 'x' } }),
      /Missing the required '#password'.*parameters\.config\.#password/,
    );
  });

  it('an unknown type is a user error listing the types', () => {
    assert.throws(
      () => setupAuth({ api: { authentication: { type: 'kerberos' } } }),
      (e: Error) => e.name === 'ConfigError' && /unknown authorization type 'kerberos'.*oauth20\.login/.test(e.message),
    );
  });
});

describe('auth: query', () => {
  let setup: AuthSetup | undefined;
  afterEach(() => {
    setup?.close();
    setup = undefined;
    nock.cleanAll();
  });

  it('appends authentication.query to every request (EX077)', async () => {
    const received = recordRequests();
    setup = setupAuth({
      api: { authentication: { type: 'query', query: { 'api-token': { attr: '#token' } } } },
      config: { '#token': '2267709' },
    });
    await setup.client.send(setup.request('users'));
    await setup.client.send(setup.request('orders', { page: 2 }));
    assert.deepEqual(
      received.map((r) => r.path),
      ['/api/users?api-token=2267709', '/api/orders?page=2&api-token=2267709'],
    );
  });

  it('evaluates per request with the query context (EX101 signature)', async () => {
    const received = recordRequests();
    setup = setupAuth({
      api: {
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
      },
      config: { '#token': '1234abcd567efg890hij' },
    });
    await setup.client.send(setup.request('items', { type: 'users' }));
    await setup.client.send(setup.request('items', { type: 'orders' }));
    const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');
    assert.deepEqual(
      received.map((r) => r.path),
      [
        `/api/items?type=users&apiToken=1234abcd567efg890hij&signature=${sha1('1234abcd567efg890hijusers')}`,
        `/api/items?type=orders&apiToken=1234abcd567efg890hij&signature=${sha1('1234abcd567efg890hijorders')}`,
      ],
    );
    assert.ok(
      received[0].path.endsWith('signature=d8221ab22e2a04e0a3a0b8818115864dd9b4bce4'),
      'EX101 recorded signature',
    );
    assert.ok(
      setup.secrets.includes(sha1('1234abcd567efg890hijusers')),
      'values computed by functions are registered for masking',
    );
  });

  it('gives the request context: url, path, queryString, method, hostname, port, resource', async () => {
    const received = recordRequests();
    const fields = ['url', 'path', 'queryString', 'method', 'hostname', 'port', 'resource'];
    setup = setupAuth({
      api: { authentication: { type: 'query', query: Object.fromEntries(fields.map((f) => [f, { request: f }])) } },
    });
    await setup.client.send(setup.request('users', { a: 'x y' }));
    const query = new URL(`http://h${received[0].path}`).searchParams;
    assert.deepEqual(Object.fromEntries(fields.map((f) => [f, query.get(f)])), {
      url: 'http://api.test/api/users?a=x+y',
      path: '/api/users',
      queryString: 'a=x+y',
      method: 'GET',
      hostname: 'api.test',
      port: '80',
      resource: '/api/users?a=x+y',
    });
  });

  it('re-encodes the job query (the auth-time trap): + becomes %20, ~ unescaped, same key replaced in place', async () => {
    const received = recordRequests();
    setup = setupAuth({ api: { authentication: { type: 'query', query: { token: 'T', since: 'override' } } } });
    await setup.client.send(setup.request('users', { since: '2017-04-19 12:46:46', t: '~x', token: 'job' }));
    assert.equal(received[0].path, '/api/users?since=override&t=~x&token=T');
    await setup.client.send(setup.request('users', { modified_since: '2017-04-19 12:46:46' }));
    assert.equal(received[1].path, '/api/users?modified_since=2017-04-19%2012%3A46%3A46&token=T&since=override');
  });

  it('url.query is an alias and the deprecated api.query is used when authentication.query is empty', async () => {
    const received = recordRequests();
    setup = setupAuth({ api: { authentication: { type: 'url.query' }, query: { key: 'k1' } } });
    await setup.client.send(setup.request('users'));
    assert.equal(received[0].path, '/api/users?key=k1');
    assert.match(setup.logs(), /'url\.query' auth is deprecated/);
    assert.match(setup.logs(), /'api\.query' is deprecated/);
  });

  it('without any query configured it is a user error', () => {
    assert.throws(
      () => setupAuth({ api: { authentication: { type: 'query' } } }),
      /requires 'query' configuration.*parameters\.api\.authentication\.query/,
    );
  });

  it('a value that ends up an object is a user error', async () => {
    recordRequests();
    setup = setupAuth({ api: { authentication: { type: 'query', query: { token: { nested: { deeper: 1 } } } } } });
    await assert.rejects(
      setup.client.send(setup.request('users')),
      /authentication\.query\.token: invalid type "object" in query/,
    );
  });
});
