import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runGex } from '../support/cli.js';
import { makeDataDir } from '../support/extraction.js';

interface Received {
  method: string;
  target: string;
  rawHeaders: string[];
  body: Buffer;
}

const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYzzSECRET';

/**
 * A SigV4 check written from the specification with node:crypto only, on what the server received:
 * canonical request (method, path, sorted query, signed headers with their received values,
 * payload hash), string to sign, HMAC key chain. Returns the signature it expects.
 */
function expectedSignature(request: Received, secret: string): { signature: string; given: string; signedHeaders: string[]; amzDate: string; scope: string } {
  const header = (name: string) => {
    const values: string[] = [];
    for (let i = 0; i < request.rawHeaders.length; i += 2) if (request.rawHeaders[i].toLowerCase() === name) values.push(request.rawHeaders[i + 1]);
    return values.map((v) => v.trim().replace(/\s+/g, ' ')).join(',');
  };
  const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(header('authorization'));
  assert.ok(auth, `a well-formed SigV4 Authorization: ${header('authorization')}`);
  const [, , date, region, service, signed, given] = auth;
  const amzDate = header('x-amz-date');
  assert.match(amzDate, /^\d{8}T\d{6}Z$/);
  assert.equal(amzDate.slice(0, 8), date);
  const [path, query = ''] = request.target.split(/\?(.*)/s);
  const encode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  const pairs = query === '' ? [] : query.split('&').map((p) => p.split(/=(.*)/s)).map(([k, v = '']) => `${encode(decode(k))}=${encode(decode(v))}`);
  const signedHeaders = signed.split(';');
  const canonical = [
    request.method,
    path.split('/').map((segment) => encode(segment)).join('/'),
    pairs.sort().join('&'),
    ...signedHeaders.map((name) => `${name}:${header(name)}`),
    '',
    signed,
    createHash('sha256').update(request.body).digest('hex'),
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, `${date}/${region}/${service}/aws4_request`, createHash('sha256').update(canonical).digest('hex')].join('\n');
  let key: Buffer | string = `AWS4${secret}`;
  for (const part of [date, region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return { signature: createHmac('sha256', key).update(stringToSign).digest('hex'), given, signedHeaders, amzDate, scope: `${date}/${region}/${service}` };
}

describe('gex run with parameters.aws.signature (process, local server)', function () {
  this.timeout(30_000);
  let server: http.Server;
  let baseUrl: string;
  const received: Received[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ method: req.method!, target: req.url!, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) });
        if (req.url === '/v1/moved') {
          res.writeHead(302, { Location: '/v1/items/?page=1' });
          return res.end();
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('[{"id":1}]');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends GET, POST and redirected requests whose signatures verify, and never prints the secret key', async () => {
    const dataDir = await makeDataDir({
      parameters: {
        aws: { signature: { credentials: { accessKeyId: 'AKIDGEX', '#secretKey': SECRET, serviceName: 'execute-api', regionName: 'eu-central-1' } } },
        api: { baseUrl, http: { headers: { 'X-Api-Version': '3' } } },
        config: {
          outputBucket: 'b',
          jobs: [
            { endpoint: 'items', dataType: 'items', params: { b: '2', a: 'x y', c: '~ü/é' } },
            { endpoint: 'search', dataType: 'search', method: 'POST', params: { q: 'ü', n: [1, 2] } },
            { endpoint: 'moved', dataType: 'moved' },
          ],
        },
      },
    });
    try {
      const started = Date.now();
      const result = await runGex(['run', '--data-dir', dataDir, '--log-level', 'debug']);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(received.map((r) => `${r.method} ${r.target}`), ['GET /v1/items?b=2&a=x%20y&c=~%C3%BC%2F%C3%A9', 'POST /v1/search', 'GET /v1/moved', 'GET /v1/items/?page=1']);
      for (const request of received) {
        const check = expectedSignature(request, SECRET);
        assert.equal(check.given, check.signature, `${request.method} ${request.target}`);
        assert.deepEqual(check.signedHeaders, ['host', 'x-amz-date', 'x-api-version']);
        assert.match(check.scope, /^\d{8}\/eu-central-1\/execute-api$/);
        const signedAt = Date.parse(check.amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
        assert.ok(Math.abs(signedAt - started) < 60_000, `signed now: ${check.amzDate}`);
      }
      assert.equal(received[1].body.toString('utf8'), '{"q":"\\u00fc","n":[1,2]}');
      assert.ok(!`${result.stdout}${result.stderr}`.includes(SECRET), 'the secret key is not printed');
      assert.match(result.stdout + result.stderr, /items/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
