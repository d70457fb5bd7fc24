import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';

/** A request as a server received it. */
export interface Received {
  method: string;
  target: string;
  rawHeaders: string[];
  body: Buffer;
}

/**
 * A SigV4 check written from the specification with node:crypto only, on what the server received:
 * canonical request (method, path, sorted query, signed headers with their received values,
 * payload hash), string to sign, HMAC key chain. Returns the signature it expects.
 */
export function expectedSignature(
  request: Received,
  secret: string,
): { signature: string; given: string; signedHeaders: string[]; amzDate: string; scope: string } {
  const header = (name: string) => {
    const values: string[] = [];
    for (let i = 0; i < request.rawHeaders.length; i += 2)
      if (request.rawHeaders[i].toLowerCase() === name) values.push(request.rawHeaders[i + 1]);
    return values.map((v) => v.trim().replace(/\s+/g, ' ')).join(',');
  };
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
      header('authorization'),
    );
  assert.ok(auth, `a well-formed SigV4 Authorization: ${header('authorization')}`);
  const [, , date, region, service, signed, given] = auth;
  const amzDate = header('x-amz-date');
  assert.match(amzDate, /^\d{8}T\d{6}Z$/);
  assert.equal(amzDate.slice(0, 8), date);
  const [path, query = ''] = request.target.split(/\?(.*)/s);
  const encode = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  const pairs =
    query === ''
      ? []
      : query
          .split('&')
          .map((p) => p.split(/=(.*)/s))
          .map(([k, v = '']) => `${encode(decode(k))}=${encode(decode(v))}`);
  const signedHeaders = signed.split(';');
  const canonical = [
    request.method,
    path
      .split('/')
      .map((segment) => encode(segment))
      .join('/'),
    pairs.sort().join('&'),
    ...signedHeaders.map((name) => `${name}:${header(name)}`),
    '',
    signed,
    createHash('sha256').update(request.body).digest('hex'),
  ].join('\n');
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    `${date}/${region}/${service}/aws4_request`,
    createHash('sha256').update(canonical).digest('hex'),
  ].join('\n');
  let key: Buffer | string = `AWS4${secret}`;
  for (const part of [date, region, service, 'aws4_request']) key = createHmac('sha256', key).update(part).digest();
  return {
    signature: createHmac('sha256', key).update(stringToSign).digest('hex'),
    given,
    signedHeaders,
    amzDate,
    scope: `${date}/${region}/${service}`,
  };
}
