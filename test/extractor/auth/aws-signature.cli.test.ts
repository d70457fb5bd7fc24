import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runGex } from '../../support/cli.js';
import { makeDataDir } from '../../support/extraction.js';
import { expectedSignature, type Received } from '../../support/sigv4-check.js';

const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYzzSECRET';

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
        received.push({
          method: req.method!,
          target: req.url!,
          rawHeaders: req.rawHeaders,
          body: Buffer.concat(chunks),
        });
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
        aws: {
          signature: {
            credentials: {
              accessKeyId: 'AKIDGEX',
              '#secretKey': SECRET,
              serviceName: 'execute-api',
              regionName: 'eu-central-1',
            },
          },
        },
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
      assert.deepEqual(
        received.map((r) => `${r.method} ${r.target}`),
        ['GET /v1/items?b=2&a=x%20y&c=~%C3%BC%2F%C3%A9', 'POST /v1/search', 'GET /v1/moved', 'GET /v1/items/?page=1'],
      );
      for (const request of received) {
        const check = expectedSignature(request, SECRET);
        assert.equal(check.given, check.signature, `${request.method} ${request.target}`);
        assert.deepEqual(check.signedHeaders, ['host', 'x-amz-date', 'x-api-version']);
        assert.match(check.scope, /^\d{8}\/eu-central-1\/execute-api$/);
        const signedAt = Date.parse(
          check.amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
        );
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
