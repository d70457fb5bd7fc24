import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import nock from 'nock';
import { UserError } from '../../../src/common/errors.js';
import { AwsSigner, awsCredentials } from '../../../src/extractor/auth/index.js';
import { DataFolder } from '../../../src/extractor/data-folder.js';
import { extract } from '../../../src/extractor/extractor.js';
import type { HttpRequest } from '../../../src/extractor/http/types.js';
import { fromPlain, type JsonObject } from '../../../src/json/index.js';
import { GE_AWS_REQUESTS, type CapturedAwsRequest } from '../../fixtures/aws-signature-ge.js';
import { captureLogger, makeDataDir } from '../../support/extraction.js';
import { expectedSignature } from '../../support/sigv4-check.js';

interface Sent {
  method: string;
  target: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** `20261123T230135Z` as unix seconds */
function amzDateSeconds(amzDate: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate)!;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) / 1000;
}

type CapturedRequest = CapturedAwsRequest['received'][number];

function rawHeader(captured: CapturedRequest, name: string): string | undefined {
  const raw = captured.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === name) return raw[i + 1];
  return undefined;
}

const signedHeaders = (authorization: string) => /SignedHeaders=([^,]+),/.exec(authorization)![1].split(';');

/**
 * Runs gex in process on the captured config, the API answered by nock at the captured origin
 * (`/v1/old` redirects and `/v1/login` answers as the capture's server did); the signing clock gives `seconds` in turn.
 */
async function runGex(
  parameters: Record<string, unknown>,
  seconds: number[],
  sent: Sent[] = [],
): Promise<{ sent: Sent[]; logs: string }> {
  const api = parameters.api as { baseUrl: string };
  const record = function (this: { req: { method: string; headers: Sent['headers'] } }, uri: string, body: unknown) {
    sent.push({
      method: this.req.method,
      target: uri,
      headers: this.req.headers,
      body: typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body),
    });
    if (uri === '/v1/login')
      return [200, '{"token":"tok"}', { 'Content-Type': 'application/json' }] as [
        number,
        string,
        Record<string, string>,
      ];
    if (uri === '/v1/old')
      return [307, '', { Location: '/v1/new?z=a+b&y=1' }] as [number, string, Record<string, string>];
    return [200, '[{"id":1}]', { 'Content-Type': 'application/json' }] as [number, string, Record<string, string>];
  };
  nock(new URL(api.baseUrl).origin)
    .persist()
    .get(() => true)
    .reply(record)
    .post(() => true)
    .reply(record);
  const dataDir = await makeDataDir({ parameters });
  const capture = captureLogger();
  try {
    const input = await new DataFolder(dataDir).read();
    capture.masker.addFromConfig(input.parameters);
    let signed = 0;
    const clock = () => seconds[Math.min(signed++, seconds.length - 1)];
    await extract(input, { dataDir, logger: capture.logger, now: () => seconds[0], authRuntime: { now: clock } });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  return { sent, logs: capture.text() };
}

describe('AWS Signature V4 (parameters.aws.signature)', () => {
  afterEach(() => nock.cleanAll());

  for (const captured of GE_AWS_REQUESTS) {
    it(`signs as the reference GE did: ${captured.description}`, async () => {
      const dates = captured.received.map((r) => rawHeader(r, 'x-amz-date')!);
      const { sent } = await runGex(captured.config.parameters, dates.map(amzDateSeconds));
      assert.equal(sent.length, captured.received.length);
      for (const [i, ge] of captured.received.entries()) {
        const request = sent[i];
        assert.equal(request.method, ge.method);
        assert.equal(request.target, ge.target);
        // nock hands over a JSON body decoded; its bytes are in the signature (the payload hash) compared below
        assert.deepEqual(
          request.body === '' ? '' : JSON.parse(request.body),
          ge.body === '' ? '' : JSON.parse(ge.body),
        );
        assert.equal(request.headers['x-amz-date'], dates[i]);
        assert.equal(request.headers.authorization, rawHeader(ge, 'authorization'));
        // the same headers signed, with the same values on the wire
        const names = signedHeaders(String(request.headers.authorization));
        assert.deepEqual(names, signedHeaders(rawHeader(ge, 'authorization')!));
        for (const name of names) assert.equal(request.headers[name], rawHeader(ge, name), name);
        assert.equal(request.headers['x-amz-content-sha256'], undefined);
      }
    });
  }

  it('signs each attempt at its own time and masks the signature and the secret key', async () => {
    const secrets: string[] = [];
    const recent: string[] = [];
    let now = 1700000000;
    const signer = new AwsSigner(
      { accessKeyId: 'AKID', secretKey: 'topSecret', serviceName: 'execute-api', regionName: 'us-east-1' },
      () => now,
      { add: (s) => secrets.push(s), addRecent: (s) => recent.push(s) },
    );
    const request: HttpRequest = { method: 'GET', url: 'http://api.test/x?b=1&a=2', headers: [['User-Agent', 'ua']] };
    const first = await signer.sign(request);
    now += 1;
    const second = await signer.sign(request);
    const header = (r: HttpRequest, name: string) => r.headers.find(([n]) => n === name)?.[1];
    assert.equal(header(first, 'X-Amz-Date'), '20231114T221320Z');
    assert.equal(header(second, 'X-Amz-Date'), '20231114T221321Z');
    assert.notEqual(header(first, 'Authorization'), header(second, 'Authorization'));
    assert.deepEqual(secrets, ['topSecret']);
    assert.equal(recent.length, 2);
    assert.ok(header(second, 'Authorization')!.endsWith(`Signature=${recent[1]}`));
    // GE's order: Host first, the request's own headers, then the date and the signature
    assert.deepEqual(
      second.headers.map(([n]) => n),
      ['Host', 'User-Agent', 'X-Amz-Date', 'Authorization'],
    );
    assert.equal(header(second, 'Host'), 'api.test');
  });

  it('replaces a configured Authorization, Date or X-Amz-Date header, keeps a configured Host and signs it', async () => {
    const signer = new AwsSigner(
      { accessKeyId: 'A', secretKey: 'S', serviceName: 's', regionName: 'r' },
      () => 1700000000,
      { add: () => {} },
    );
    const signed = await signer.sign({
      method: 'GET',
      url: 'https://api.test:8443/x',
      headers: [
        ['authorization', 'Basic dTpw'],
        ['Date', 'Mon'],
        ['x-amz-date', '1'],
        ['host', 'proxy.test'],
        ['Connection', 'close'],
      ],
    });
    assert.deepEqual(
      signed.headers.map(([n]) => n.toLowerCase()),
      ['host', 'connection', 'x-amz-date', 'authorization'],
    );
    assert.equal(signed.headers[0][1], 'proxy.test');
    assert.match(signed.headers[3][1], /SignedHeaders=connection;host;x-amz-date, Signature=[0-9a-f]{64}$/);
  });

  it('sends the explicit non-default port in Host, none for the default one', async () => {
    const signer = new AwsSigner(
      { accessKeyId: 'A', secretKey: 'S', serviceName: 's', regionName: 'r' },
      () => 1700000000,
      { add: () => {} },
    );
    const host = async (url: string) => (await signer.sign({ method: 'GET', url, headers: [] })).headers[0];
    assert.deepEqual(await host('https://api.test:8443/x'), ['Host', 'api.test:8443']);
    assert.deepEqual(await host('https://api.test/x'), ['Host', 'api.test']);
  });

  it('orders the canonical query by bytes as SigV4 specifies (a deliberate difference: GE sorts numeric keys and values as numbers, which AWS rejects)', async () => {
    const signer = new AwsSigner(
      { accessKeyId: 'A', secretKey: 'S', serviceName: 's', regionName: 'r' },
      () => 1700000000,
      { add: () => {} },
    );
    const signed = await signer.sign({
      method: 'GET',
      url: 'http://api.test/a//b?10=x&9=y&k=1&k=10&k=9',
      headers: [['X-Multi', 'a   b']],
    });
    const target = signed.url.slice('http://api.test'.length);
    assert.equal(target, '/a//b?10=x&9=y&k=1&k=10&k=9');
    const check = expectedSignature(
      { method: 'GET', target, rawHeaders: signed.headers.flat(), body: Buffer.alloc(0) },
      'S',
    );
    assert.equal(check.given, check.signature);
    assert.deepEqual(check.signedHeaders, ['host', 'x-amz-date', 'x-multi']);
  });

  it('refuses to sign bytes that are not UTF-8 text instead of signing them wrongly', async () => {
    const signer = new AwsSigner(
      { accessKeyId: 'A', secretKey: 'S', serviceName: 's', regionName: 'r' },
      () => 1700000000,
      { add: () => {} },
    );
    await assert.rejects(
      signer.sign({ method: 'GET', url: 'http://api.test/x?a=%FF', headers: [] }),
      /the query string holds bytes that are not UTF-8 text/,
    );
    await assert.rejects(
      signer.sign({ method: 'GET', url: 'http://api.test/x', headers: [['X-Sig', '\udcff']] }),
      /the header X-Sig holds bytes/,
    );
    const ok = await signer.sign({ method: 'GET', url: 'http://api.test/x?a=%C3%BC', headers: [] });
    assert.equal(ok.url, 'http://api.test/x?a=%C3%BC');
  });

  describe('credentials', () => {
    const parameters = (credentials: unknown) => fromPlain({ aws: { signature: { credentials } } }) as JsonObject;
    const full = {
      accessKeyId: ' AKID\n',
      '#secretKey': ' secret ',
      serviceName: 'execute-api',
      regionName: 'eu-west-1',
    };

    it('reads the four keys; the key id and the secret are trimmed as the SDK does', () => {
      assert.deepEqual(awsCredentials(parameters(full)), {
        accessKeyId: 'AKID',
        secretKey: 'secret',
        serviceName: 'execute-api',
        regionName: 'eu-west-1',
      });
      assert.deepEqual(awsCredentials(parameters({ ...full, accessKeyId: 5 })), {
        accessKeyId: '5',
        secretKey: 'secret',
        serviceName: 'execute-api',
        regionName: 'eu-west-1',
      });
    });

    it('signs nothing when the credentials are absent or PHP-empty', () => {
      assert.equal(awsCredentials(new Map()), null);
      assert.equal(awsCredentials(fromPlain({ aws: 'x' }) as JsonObject), null);
      assert.equal(awsCredentials(parameters({})), null);
      assert.equal(awsCredentials(parameters([])), null);
    });

    it("requires each key with GE's message, and refuses a value that is not text", () => {
      const { regionName: _dropped, ...noRegion } = full;
      assert.throws(
        () => awsCredentials(parameters(noRegion)),
        (e: unknown) =>
          e instanceof UserError &&
          e.message === 'Option "regionName" under "parameters.aws.signature.credentials" cannot be empty.',
      );
      assert.throws(
        () => awsCredentials(parameters({ ...full, '#secretKey': '' })),
        /Option "#secretKey" under "parameters\.aws\.signature\.credentials" cannot be empty\./,
      );
      assert.throws(() => awsCredentials(parameters({ ...full, '#secretKey': '0' })), /Option "#secretKey"/);
      assert.throws(() => awsCredentials(parameters('x')), /Option "accessKeyId"/);
      assert.throws(
        () => awsCredentials(parameters({ ...full, serviceName: ['a'] })),
        /parameters\.aws\.signature\.credentials\.serviceName: must be a string/,
      );
    });

    it('stops the run before any request when a key is missing', async () => {
      const config = structuredClone(GE_AWS_REQUESTS[0].config.parameters) as {
        aws: { signature: { credentials: Record<string, unknown> } };
      };
      delete config.aws.signature.credentials.serviceName;
      const sent: Sent[] = [];
      await assert.rejects(
        runGex(config, [1700000000], sent),
        /Option "serviceName" under "parameters\.aws\.signature\.credentials" cannot be empty/,
      );
      assert.equal(sent.length, 0);
    });
  });
});
