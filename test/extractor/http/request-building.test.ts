import assert from 'node:assert/strict';
import nock from 'nock';
import { silentLogger } from '../../../src/common/logger.js';
import { HttpClient } from '../../../src/extractor/http/http-client.js';
import { buildHttpRequest, USER_AGENT } from '../../../src/extractor/http/request-builder.js';
import { RetryPolicy } from '../../../src/extractor/http/retry-policy.js';
import type { PageRequest } from '../../../src/extractor/pagination/paginator.js';
import { fromPlain, type JsonObject } from '../../../src/json/index.js';
import { apiSettings } from '../../support/api.js';

const page = (
  endpoint: string,
  params: Record<string, unknown> = {},
  method: PageRequest['method'] = 'GET',
): PageRequest => ({
  endpoint,
  params: fromPlain(params) as JsonObject,
  method,
});
const noHeaders = new Map() as JsonObject;

describe('request building', () => {
  it('joins endpoint and baseUrl like Guzzle (RFC 3986)', () => {
    assert.equal(
      buildHttpRequest(page('users'), noHeaders, apiSettings({ baseUrl: 'https://example.com/api' })).url,
      'https://example.com/users',
    );
    assert.equal(
      buildHttpRequest(page('users'), noHeaders, apiSettings({ baseUrl: 'https://example.com/api/' })).url,
      'https://example.com/api/users',
    );
    assert.equal(
      buildHttpRequest(page('/v2/users'), noHeaders, apiSettings({ baseUrl: 'https://example.com/api/' })).url,
      'https://example.com/v2/users',
    );
  });

  it('orders query params: defaultOptions first, then the job, overridden keys keep their place', () => {
    const api = apiSettings({
      baseUrl: 'http://h/',
      http: { defaultOptions: { params: { debug: '1', orderBy: 'default', secretKey: '123' } } },
    });
    const request = buildHttpRequest(
      page('users', { orderBy: 'userName', secretKey: 'none', customerId: '234' }),
      noHeaders,
      api,
    );
    assert.equal(request.url, 'http://h/users?debug=1&orderBy=userName&secretKey=none&customerId=234');
  });

  it("merges defaultOptions params like GE: a job's nested objects replace the default whole, lists merge by index", () => {
    // bytes observed on the reference Generic Extractor with these same params
    const api = apiSettings({
      baseUrl: 'http://h/',
      http: {
        defaultOptions: {
          params: {
            a: { x: 1, y: 2 },
            b: [[1, 2], [3]],
            c: [{ x: 1, y: 2 }],
            d: { x: [1, 2] },
            e: [{ p: 1 }],
            f: [1, 2],
            g: { 0: 'z', k: 1 },
          },
        },
      },
    });
    const jobParams = { a: [5], b: [[9]], c: [{ x: 9 }], d: { x: [9] }, e: [[5]], f: { 1: 'one' }, g: [7] };
    assert.equal(
      buildHttpRequest(page('post2', jobParams, 'POST'), noHeaders, api).body,
      '{"a":{"x":1,"y":2,"0":5},"b":[[9,2],[3]],"c":[{"x":9}],"d":{"x":[9]},"e":[{"p":1,"0":5}],"f":{"1":"one"},"g":{"0":7,"k":1}}',
    );
    const getApi = apiSettings({
      baseUrl: 'http://h/',
      http: {
        defaultOptions: {
          params: { a: { x: 1, y: 2, z: { deep: 1, keep: 2 } }, list: [1, 2, 3], s: 'd', o: { k: 1 } },
        },
      },
    });
    const get = buildHttpRequest(
      page('get1', { a: { x: 9, z: { deep: 5 } }, list: [7], s: 'job', o: 'scalar' }),
      noHeaders,
      getApi,
    );
    assert.equal(
      decodeURIComponent(get.url),
      'http://h/get1?a[x]=9&a[z][deep]=5&list[0]=7&list[1]=2&list[2]=3&s=job&o=scalar',
    );
    const get2 = buildHttpRequest(page('get2', { a: 'fg', list: { q: 1 } }), noHeaders, getApi);
    assert.equal(decodeURIComponent(get2.url), 'http://h/get2?a=fg&list[q]=1&s=d&o[k]=1');
  });

  it('merges a job\'s empty object or list-shaped object ("0", "1", … in order) by index, as GE keeps them arrays', () => {
    // bodies observed on the reference Generic Extractor (FORM) with these same params
    const api = apiSettings({
      baseUrl: 'http://h/',
      http: { defaultOptions: { params: { name: [9, 5, true], o: { x: 1, y: 2 } } } },
    });
    const form = (params: Record<string, unknown>) =>
      decodeURIComponent(buildHttpRequest(page('x', params, 'FORM'), noHeaders, api).body!);
    assert.equal(form({ name: {} }), 'name[0]=9&name[1]=5&name[2]=1&o[x]=1&o[y]=2');
    assert.equal(form({ name: { 0: 7 } }), 'name[0]=7&name[1]=5&name[2]=1&o[x]=1&o[y]=2');
    assert.equal(form({ o: {} }), 'name[0]=9&name[1]=5&name[2]=1&o[x]=1&o[y]=2');
    assert.equal(form({ name: { 0: 7, a: 1 } }), 'name[0]=7&name[a]=1&o[x]=1&o[y]=2');
    assert.equal(form({ o: { z: 3 } }), 'name[0]=9&name[1]=5&name[2]=1&o[z]=3');
  });

  it('encodes values like PHP urlencode (space as +, ~ * escaped, booleans 1/0, nulls dropped)', () => {
    const request = buildHttpRequest(
      page('s', { q: 'a b~*', t: true, f: false, n: null, u: 'ú' }),
      noHeaders,
      apiSettings({ baseUrl: 'http://h/' }),
    );
    assert.equal(request.url, 'http://h/s?q=a+b%7E%2A&t=1&f=0&u=%C3%BA');
  });

  it('sends POST params as a PHP-style JSON body and an empty body as []', () => {
    const api = apiSettings({ baseUrl: 'http://h/' });
    const post = buildHttpRequest(page('find', { filter: { path: 'a/b', name: 'é' }, n: 1.0 }, 'POST'), noHeaders, api);
    assert.equal(post.method, 'POST');
    assert.equal(post.url, 'http://h/find');
    assert.equal(post.body, '{"filter":{"path":"a\\/b","name":"\\u00e9"},"n":1}');
    assert.deepEqual(
      post.headers.find(([n]) => n === 'Content-Type'),
      ['Content-Type', 'application/json'],
    );
    assert.equal(buildHttpRequest(page('find', {}, 'POST'), noHeaders, api).body, '[]');
  });

  it('sends FORM params url-encoded in a POST body', () => {
    const form = buildHttpRequest(
      page('login', { username: 'John Doe', password: 'a&b' }, 'FORM'),
      noHeaders,
      apiSettings({ baseUrl: 'http://h/' }),
    );
    assert.equal(form.method, 'POST');
    assert.equal(form.body, 'username=John+Doe&password=a%26b');
    assert.deepEqual(
      form.headers.find(([n]) => n === 'Content-Type'),
      ['Content-Type', 'application/x-www-form-urlencoded'],
    );
  });

  it('applies header precedence: job headers over defaultOptions, client headers only when absent', () => {
    const api = apiSettings(
      {
        baseUrl: 'http://h/',
        http: {
          headers: { Accept: 'text/csv', 'X-Client': 'a' },
          defaultOptions: { headers: { 'X-Default': 'd', 'X-Job': 'default' } },
        },
      },
      { http: { headers: { 'X-Client': 'config' } } },
    );
    const request = buildHttpRequest(
      page('x'),
      fromPlain({ 'X-Job': 'job', accept: 'application/json' }) as JsonObject,
      api,
    );
    assert.deepEqual(request.headers, [
      ['X-Default', 'd'],
      ['X-Job', 'job'],
      ['accept', 'application/json'],
      ['X-Client', 'config'],
      ['User-Agent', USER_AGENT],
    ]);
  });

  it('fails with the missing header named when requiredHeaders are not set in config.http.headers', () => {
    assert.throws(
      () => apiSettings({ baseUrl: 'http://h/', http: { requiredHeaders: ['X-AppKey'] } }),
      /Missing required header X-AppKey in 'config.http.headers'/,
    );
  });

  it('rejects a baseUrl that is not an http(s) URL, naming the path', () => {
    assert.throws(
      () => apiSettings({ baseUrl: 'ftp://h/' }),
      /parameters\.api\.baseUrl: "ftp:\/\/h\/" is not an http\(s\) URL/,
    );
  });

  it('sends exactly the built request over HTTP (nock)', async () => {
    const api = apiSettings({ baseUrl: 'http://api.test/v1/', http: { headers: { 'X-Key': 'k' } } });
    const scope = nock('http://api.test', { reqheaders: { 'x-key': 'k', 'user-agent': USER_AGENT } })
      .get('/v1/users')
      .query({ 'filter[type]': 'active', page: '1' })
      .reply(200, '[]');
    const client = new HttpClient({
      retry: new RetryPolicy(api.retry),
      connectTimeoutMs: 1000,
      requestTimeoutMs: 1000,
      logger: silentLogger(),
    });
    try {
      const response = await client.send(
        buildHttpRequest(page('users', { filter: { type: 'active' }, page: 1 }), noHeaders, api),
      );
      assert.equal(response.status, 200);
      assert.ok(scope.isDone());
    } finally {
      client.close();
      nock.cleanAll();
    }
  });
});
