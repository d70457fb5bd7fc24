import type { SignatureV4 } from '@smithy/signature-v4';
import { ConfigError, UserError } from '../../common/errors.js';
import { isJsonObject, isScalar, type JsonObject } from '../../json/index.js';
import {
  guzzleQueryBuild,
  guzzleQueryParse,
  hasRawBytes,
  phpEmpty,
  phpRawUrlencode,
  phpToString,
  phpTrim,
} from '../../php/index.js';
import type { HttpRequest } from '../http/types.js';
import type { SecretSink } from './auth-method.js';
import { splitUrl } from './request-parts.js';

export const AWS_CREDENTIALS_PATH = 'parameters.aws.signature.credentials';

/** `parameters.aws.signature.credentials` (GE's keys; `#secretKey` is the encrypted one). */
export interface AwsCredentials {
  accessKeyId: string;
  secretKey: string;
  serviceName: string;
  regionName: string;
}

const REQUIRED = ['accessKeyId', '#secretKey', 'serviceName', 'regionName'] as const;

/**
 * The signing credentials, or null when `credentials` is PHP-empty (no signing, as GE). Each of
 * the four keys must be PHP-non-empty (GE's message); a list or object value is refused.
 */
export function awsCredentials(parameters: JsonObject): AwsCredentials | null {
  const aws = parameters.get('aws');
  const signature = isJsonObject(aws) ? aws.get('signature') : undefined;
  const credentials = isJsonObject(signature) ? signature.get('credentials') : undefined;
  if (phpEmpty(credentials)) return null;
  const section: JsonObject = isJsonObject(credentials) ? credentials : new Map();
  const values = REQUIRED.map((key) => {
    const value = section.get(key);
    if (phpEmpty(value))
      throw new UserError('GEX_CONFIG_INVALID', `Option "${key}" under "${AWS_CREDENTIALS_PATH}" cannot be empty.`);
    if (!isScalar(value))
      throw new ConfigError(`${AWS_CREDENTIALS_PATH}.${key}`, 'must be a string', 'Set it to the text value');
    return phpToString(value);
  });
  // the SDK's Credentials trims the key id and the secret (PHP trim())
  return {
    accessKeyId: phpTrim(values[0]),
    secretKey: phpTrim(values[1]),
    serviceName: values[2],
    regionName: values[3],
  };
}

/**
 * Headers the AWS SDK for PHP (GE's signer) leaves out of the signature; it signs every other
 * header of the request, `Host` included.
 */
const UNSIGNED_HEADERS = new Set([
  'cache-control',
  'content-type',
  'content-length',
  'expect',
  'max-forwards',
  'pragma',
  'range',
  'te',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'if-range',
  'accept',
  'authorization',
  'proxy-authorization',
  'from',
  'referer',
  'user-agent',
  'x-amzn-trace-id',
  'aws-sdk-invocation-id',
  'aws-sdk-retry',
]);

/** Headers the signer replaces: a configured one never reaches the wire (as with GE). */
const REPLACED_HEADERS = new Set(['authorization', 'x-amz-date', 'date']);

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/**
 * AWS Signature Version 4 over the request exactly as it goes on the wire (GE
 * `parameters.aws.signature`): applied to every attempt of every request after the auth method,
 * as GE's signing middleware sits innermost. The query is re-encoded as GE's signer leaves it
 * (RFC 3986, repeated keys grouped), `Host` is sent explicitly so that the signed value is the
 * sent one, `X-Amz-Date` and `Authorization` are added last. The signature itself is computed by
 * AWS's own signer (@smithy/signature-v4).
 */
export class AwsSigner {
  /** AWS's signer, loaded on the first request: its ~400 KB of code would cost every other run start-up time and memory */
  private signer: Promise<SignatureV4> | undefined;

  /** `now`: unix seconds (the signing time; tests pin it) */
  constructor(
    private readonly credentials: AwsCredentials,
    private readonly now: () => number,
    private readonly secrets: SecretSink,
  ) {
    secrets.add(credentials.secretKey);
  }

  private async loadSigner(): Promise<SignatureV4> {
    const { createSignatureV4 } = await import('./aws-signer-sdk.js');
    return createSignatureV4(this.credentials);
  }

  async sign(request: HttpRequest): Promise<HttpRequest> {
    const parts = splitUrl(request.url);
    const parsedQuery = guzzleQueryParse(parts.query);
    refuseRawBytes(request, parts.query);
    const query = parsedQuery.size === 0 ? parts.query : guzzleQueryBuild(parsedQuery);
    const url = `${parts.origin}${parts.path}${query === '' ? '' : `?${query}`}`;

    const kept = request.headers.filter(([name]) => !REPLACED_HEADERS.has(name.toLowerCase()));
    const hasHost = kept.some(([name]) => name.toLowerCase() === 'host');
    const port = parts.port !== null && parts.port !== DEFAULT_PORTS[parts.scheme] ? `:${parts.port}` : '';
    const headers: Array<[string, string]> = hasHost ? kept : [['Host', `${parts.host}${port}`], ...kept];

    // the SDK joins the values of a repeated header (any case) with commas, in sorted order
    const grouped = new Map<string, string[]>();
    for (const [name, value] of headers)
      grouped.set(name.toLowerCase(), [...(grouped.get(name.toLowerCase()) ?? []), value]);
    const signable = new Set([...grouped.keys()].filter((name) => !UNSIGNED_HEADERS.has(name)));

    this.signer ??= this.loadSigner();
    const signed = await (
      await this.signer
    ).sign(
      {
        method: request.method,
        protocol: `${parts.scheme}:`,
        hostname: parts.host,
        path: canonicalPath(parts.path),
        query: Object.fromEntries(
          [...parsedQuery].map(([k, v]) => [k, Array.isArray(v) ? v.map((x) => x ?? '') : (v ?? '')]),
        ),
        headers: Object.fromEntries([...grouped].map(([name, values]) => [name, values.sort().join(',')])),
        body: request.body === undefined ? undefined : Buffer.from(request.body, 'utf8'),
      },
      { signingDate: new Date(this.now() * 1000), signableHeaders: signable, unsignableHeaders: UNSIGNED_HEADERS },
    );
    const authorization = String(signed.headers.authorization);
    const signature = /Signature=([0-9a-f]+)$/.exec(authorization)?.[1];
    if (signature !== undefined) this.secrets.addRecent?.(signature);
    return {
      ...request,
      url,
      headers: [...headers, ['X-Amz-Date', String(signed.headers['x-amz-date'])], ['Authorization', authorization]],
    };
  }
}

/** SigV4's canonical URI as GE's signer makes it: leading slashes trimmed to one, each byte but `/` and unreserved ones escaped. */
function canonicalPath(path: string): string {
  return `/${phpRawUrlencode(path.replace(/^\/+/, '')).replace(/%2F/g, '/')}`;
}

/**
 * Bytes that are not UTF-8 text (a raw digest in a header, `%FF` in the query) cannot be given to
 * the signer, which reads text: refused rather than signed wrongly.
 */
function refuseRawBytes(request: HttpRequest, query: string): void {
  const where = (what: string) =>
    new UserError(
      'GEX_API_REQUEST_UNENCODABLE',
      `AWS signing of ${request.method} ${request.url}: ${what} holds bytes that are not UTF-8 text, which gex cannot sign. Encode them first (e.g. with base64_encode).`,
    );
  for (const [name, value] of request.headers) if (hasRawBytes(value)) throw where(`the header ${name}`);
  if (!isUtf8(percentDecodedBytes(query))) throw where('the query string');
}

/** The bytes a query string decodes to (`%XX` is one byte, anything else its UTF-8). */
function percentDecodedBytes(text: string): Buffer {
  const chunks: Buffer[] = [];
  for (let i = 0; i < text.length;) {
    const escape = /^%[0-9A-Fa-f]{2}/.exec(text.slice(i, i + 3));
    if (escape) {
      chunks.push(Buffer.from([parseInt(escape[0].slice(1), 16)]));
      i += 3;
    } else {
      const ch = String.fromCodePoint(text.codePointAt(i)!);
      chunks.push(Buffer.from(ch, 'utf8'));
      i += ch.length;
    }
  }
  return Buffer.concat(chunks);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function isUtf8(bytes: Buffer): boolean {
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}
