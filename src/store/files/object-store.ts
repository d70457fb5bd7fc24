import { createHash, randomBytes } from 'node:crypto';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { UserError } from '../../common/errors.js';
import { excerptQuoted, excerptText } from '../../common/log-text.js';
import { describeNetworkError } from '../../common/network-errors.js';
import { maskUrlSignatures } from '../../common/url-signature.js';

/**
 * Bytes of File Storage in an S3-compatible object store (AWS S3, MinIO, Ceph RGW, Cloudflare R2,
 * Swift's s3api): the `ObjectStore` interface and `S3ObjectStore`, AWS's own client. File Storage
 * keeps its bytes here with `--file-storage` (ObjectStoreBytes in file-bytes.ts).
 *
 * Settings are `s3://BUCKET[/PREFIX][?path-style=true|false]` plus the AWS SDK's own environment
 * (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, AWS_PROFILE, an instance's role: the SDK's default credential chain). Keys
 * are relative to PREFIX and checked: only letters, digits, `._-` and `/` between non-empty segments
 * that are not `.` or `..` — a file's key is built from numbers only (fileKey). No call holds a
 * whole object in memory: uploads go in parts of PART_BYTES, at most UPLOAD_QUEUE of them at once.
 * Errors are UserErrors naming the endpoint, the bucket and what was refused, never a secret or a
 * pre-signed address's signature.
 */

/** Bytes of one part of a streamed upload (S3's minimum is 5 MiB, its maximum 10,000 parts). */
export const PART_BYTES = 8 * 1024 * 1024;
/** Parts of a streamed upload in flight at once: with PART_BYTES, at most ~24 MiB held per upload. */
export const UPLOAD_QUEUE = 2;
/** Longest a pre-signed address may live (SigV4's limit: 7 days). */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 60 * 60;
/** S3's part numbers and most keys per DeleteObjects or list page. */
export const MAX_PART_NUMBER = 10_000;
export const MAX_KEYS_PER_REQUEST = 1000;
/** Longest prefix and relative key accepted (S3 keys are at most 1024 bytes). */
export const MAX_PREFIX = 256;
export const MAX_KEY = 512;
/** Default bounds of one request: connecting, then waiting for the server's answer. */
export const CONNECT_TIMEOUT_MS = 5_000;
export const REQUEST_TIMEOUT_MS = 60_000;

export interface ObjectStoreSettings {
  readonly bucket: string;
  /** '' or segments ending in '/' */
  readonly prefix: string;
  /** undefined: AWS S3 by the region */
  readonly endpoint: string | undefined;
  /** undefined: the SDK's chain (AWS_REGION, the profile) */
  readonly region: string | undefined;
  readonly forcePathStyle: boolean;
  /** explicit credentials (tests); undefined: the SDK's default chain */
  readonly credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  readonly connectTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
  /** attempts per request, retries included (the SDK's default: 3) */
  readonly maxAttempts?: number;
}

export interface ListedObject {
  readonly key: string;
  readonly size: number;
  /** when it was last written (undefined: the server did not say) */
  readonly lastModified: Date | undefined;
}

/** A multipart upload begun and neither completed nor aborted. */
export interface ListedUpload {
  readonly key: string;
  readonly uploadId: string;
  /** when it began (undefined: the server did not say) */
  readonly initiated: Date | undefined;
}

export interface UploadPage {
  readonly uploads: readonly ListedUpload[];
  /** pass to listMultipart again for the next page; undefined on the last */
  readonly continuation: { readonly keyMarker: string; readonly uploadIdMarker: string } | undefined;
}

export interface ObjectPage {
  readonly objects: readonly ListedObject[];
  /** pass to list again for the next page; undefined on the last */
  readonly continuation: string | undefined;
}

export interface CompletedPart {
  readonly partNumber: number;
  readonly etag: string;
}

export interface ObjectStore {
  /** `s3://bucket/prefix/` as shown in messages */
  readonly location: string;
  /** Streams `body` into `key`; with `size`, a stream of another length is refused and nothing stored. */
  putStream(key: string, body: Readable, size?: number): Promise<{ size: number }>;
  getStream(key: string): Promise<Readable>;
  /** the object's size, undefined when there is none */
  head(key: string): Promise<number | undefined>;
  delete(key: string): Promise<void>;
  deleteMany(keys: readonly string[]): Promise<void>;
  /** keys under `prefix` (relative to the store's prefix), a page at a time */
  list(prefix: string, continuation?: string, maxKeys?: number): Promise<ObjectPage>;
  /** multipart uploads under `prefix` (relative to the store's prefix) not yet completed or aborted, a page at a time */
  listMultipart(prefix: string, continuation?: UploadPage['continuation'], maxUploads?: number): Promise<UploadPage>;
  presignPut(key: string, size: number, expiresSeconds: number): Promise<string>;
  presignGet(key: string, expiresSeconds: number): Promise<string>;
  createMultipart(key: string): Promise<string>;
  presignPart(key: string, uploadId: string, partNumber: number, expiresSeconds: number): Promise<string>;
  completeMultipart(key: string, uploadId: string, parts: readonly CompletedPart[]): Promise<void>;
  abortMultipart(key: string, uploadId: string): Promise<void>;
  /** The bucket is reachable and writable with these credentials: HeadBucket, a tiny put and delete. */
  check(): Promise<void>;
  close(): void;
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

function settingInvalid(what: string, value: string): UserError {
  return new UserError('GEX_SETTING_INVALID', `${what}, got ${excerptQuoted(value)}`);
}

function checkedSegments(path: string, what: string, max: number): string[] {
  if (path.length > max) throw settingInvalid(`${what} must be at most ${max} characters`, path);
  const segments = path.split('/');
  for (const segment of segments) {
    if (!SEGMENT.test(segment) || segment === '.' || segment === '..') {
      throw settingInvalid(
        `${what} must be segments of letters, digits, '.', '_' and '-' between single '/' (no '.' or '..' segment)`,
        path,
      );
    }
  }
  return segments;
}

function flag(value: string, what: string): boolean {
  if (/^(true|1|yes)$/i.test(value)) return true;
  if (/^(false|0|no)$/i.test(value)) return false;
  throw settingInvalid(`${what} must be true or false`, value);
}

/**
 * `s3://BUCKET[/PREFIX][?path-style=true|false]` and the environment as settings. Path-style
 * addressing (`endpoint/bucket/key` rather than `bucket.endpoint/key`): `?path-style=`, else
 * GEX_S3_FORCE_PATH_STYLE, else on exactly when an endpoint is set (MinIO, Ceph, Swift and most
 * self-hosted servers need it; AWS S3 and R2 take either). A custom endpoint without a region signs
 * for us-east-1, which these servers accept.
 */
export function parseObjectStoreUrl(url: string, env: NodeJS.ProcessEnv = process.env): ObjectStoreSettings {
  const match = /^s3:\/\/([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/.exec(url);
  if (!match) throw settingInvalid('The file storage must be s3://BUCKET[/PREFIX]', url);
  const bucket = match[1];
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..')) {
    throw settingInvalid('The bucket of s3://BUCKET must be 3-63 lowercase letters, digits, dots and hyphens', url);
  }
  const rawPrefix = (match[2] ?? '').replace(/\/$/, '');
  const prefix =
    rawPrefix === '' ? '' : `${checkedSegments(rawPrefix, 'The prefix of s3://BUCKET/PREFIX', MAX_PREFIX).join('/')}/`;
  let pathStyle: boolean | undefined;
  for (const pair of (match[3] ?? '').split('&').filter(Boolean)) {
    const [name, value = ''] = pair.split('=');
    if (name !== 'path-style') throw settingInvalid('s3:// URLs take only ?path-style=true|false', url);
    pathStyle = flag(decodeURIComponent(value), 'path-style in the s3:// URL');
  }
  const endpointText = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
  let endpoint: string | undefined;
  if (endpointText !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(endpointText);
    } catch {
      throw settingInvalid('AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL must be an http:// or https:// URL', endpointText);
    }
    if (!/^https?:$/.test(parsed.protocol) || parsed.username || parsed.password || parsed.search) {
      throw settingInvalid(
        'AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL must be an http:// or https:// URL without credentials or query',
        parsed.protocol + '//' + parsed.host,
      );
    }
    endpoint = parsed.href.replace(/\/$/, '');
  }
  if (pathStyle === undefined && env.GEX_S3_FORCE_PATH_STYLE) {
    pathStyle = flag(env.GEX_S3_FORCE_PATH_STYLE, 'GEX_S3_FORCE_PATH_STYLE');
  }
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || (endpoint ? 'us-east-1' : undefined);
  return { bucket, prefix, endpoint, region, forcePathStyle: pathStyle ?? endpoint !== undefined };
}

/** The key of a project's file: numbers only, whatever the ids came from. */
export function fileKey(projectId: number, fileId: number): string {
  for (const [what, id] of [
    ['project id', projectId],
    ['file id', fileId],
  ] as const) {
    if (!Number.isSafeInteger(id) || id < 1)
      throw new TypeError(`The ${what} of an object key must be a positive integer`);
  }
  return `projects/${projectId}/files/${fileId}`;
}

/** A relative key, checked like a prefix (segments of `[A-Za-z0-9._-]`, no `.` or `..`). */
function checkedKey(key: string): string {
  return checkedSegments(key, 'An object key', MAX_KEY).join('/');
}

function checkedExpiry(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_PRESIGN_SECONDS) {
    throw new RangeError(`A pre-signed address lives 1..${MAX_PRESIGN_SECONDS} s, got ${seconds}`);
  }
  return seconds;
}

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  cause?: unknown;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);
const WRONG_KEY = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidToken', 'ExpiredToken']);

/** The network error under an SDK error (the SDK wraps some), if any. */
function networkCode(error: SdkError): string | undefined {
  for (let e: SdkError | undefined = error, depth = 0; e && depth < 5; e = e.cause as SdkError | undefined, depth++) {
    if (e.code && NETWORK_CODES.has(e.code)) return e.code;
    if (e.name === 'TimeoutError' || e.code === 'TimeoutError') return 'ETIMEDOUT';
  }
  return undefined;
}

/** A body that ended early without a network code (`aborted`, a premature close): a reset connection. */
function brokenOff(error: unknown): SdkError {
  return { code: 'ECONNRESET', message: (error as SdkError)?.message, cause: error };
}

export class S3ObjectStore implements ObjectStore {
  readonly location: string;
  private readonly client: S3Client;
  private readonly shownEndpoint: string;

  constructor(private readonly settings: ObjectStoreSettings) {
    this.location = `s3://${settings.bucket}/${settings.prefix}`;
    this.shownEndpoint = settings.endpoint ?? `AWS S3 (${settings.region ?? 'the default region'})`;
    // the releases pinned are the last for Node 20 on purpose (package.json): no warning on each start
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.client = new S3Client({
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      ...(settings.region ? { region: settings.region } : {}),
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
      forcePathStyle: settings.forcePathStyle,
      // checksums only where S3 requires them: most S3-compatible servers know no CRC32 trailers
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: settings.maxAttempts ?? 3,
      requestHandler: {
        connectionTimeout: settings.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
        requestTimeout: settings.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
        throwOnRequestTimeout: true,
      },
    });
  }

  close(): void {
    this.client.destroy();
  }

  private fullKey(key: string): string {
    return this.settings.prefix + checkedKey(key);
  }

  /** A UserError saying what failed where, the secrets of the settings and environment masked out. */
  private failure(error: unknown, what: string): UserError {
    if (error instanceof UserError) return error;
    const e = (error ?? {}) as SdkError;
    const where = `The object store at ${this.shownEndpoint}`;
    const target = `s3://${this.settings.bucket}`;
    const status = e.$metadata?.httpStatusCode;
    const network = networkCode(e);
    let message: string;
    let code: 'GEX_OBJECT_STORE_UNREACHABLE' | 'GEX_OBJECT_STORE_REFUSED' = 'GEX_OBJECT_STORE_REFUSED';
    if (network) {
      code = 'GEX_OBJECT_STORE_UNREACHABLE';
      message =
        `${where} cannot be reached while ${what} ${target}: ${describeNetworkError({ code: network })}. ` +
        'Check AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_REGION and the network.';
    } else if (e.name && WRONG_KEY.has(e.name)) {
      message =
        `${where} refused ${what} ${target}: the access key is unknown or the secret key is wrong (${e.name}). ` +
        'Check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the profile or role, and AWS_SESSION_TOKEN).';
    } else if (e.name === 'NoSuchBucket' || (status === 404 && /bucket/i.test(what))) {
      message = `${where} refused ${what} ${target}: there is no bucket ${this.settings.bucket}. Create it, or fix the bucket in s3://BUCKET.`;
    } else if (e.name === 'AccessDenied' || status === 403) {
      message =
        `${where} refused ${what} ${target}: access denied (${e.name && e.name !== 'Unknown' ? e.name : `HTTP ${status}`}). ` +
        "Check the credentials and the bucket's policy (gex needs to list, get, put and delete objects).";
    } else if (/region is missing/i.test(e.message ?? '')) {
      message = `${where} cannot be used: no region. Set AWS_REGION (or a profile's region).`;
    } else if (/credential/i.test(e.name ?? '') || /credential/i.test(e.message ?? '')) {
      message =
        `${where} refused ${what} ${target}: no credentials (${excerptText(e.message ?? String(e.name))}). ` +
        'Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or run with a role.';
    } else {
      const reason = [e.name, status ? `HTTP ${status}` : undefined, e.message ? excerptText(e.message) : undefined]
        .filter(Boolean)
        .join(', ');
      message = `${where} refused ${what} ${target}: ${reason || String(error)}.`;
    }
    return new UserError(code, this.masked(message));
  }

  private masked(text: string): string {
    let out = maskUrlSignatures(text);
    const secrets = [
      this.settings.credentials?.secretAccessKey,
      this.settings.credentials?.sessionToken,
      process.env.AWS_SECRET_ACCESS_KEY,
      process.env.AWS_SESSION_TOKEN,
    ];
    for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('***');
    return out;
  }

  private async run<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw this.failure(error, what);
    }
  }

  async putStream(key: string, body: Readable, size?: number): Promise<{ size: number }> {
    const Key = this.fullKey(key);
    let counted = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        counted += chunk.length;
        if (size !== undefined && counted > size) {
          callback(new UserError('GEX_STORE_INVALID_REQUEST', `The upload is longer than its ${size} bytes`));
        } else callback(null, chunk);
      },
      flush(callback: TransformCallback) {
        if (size !== undefined && counted !== size) {
          callback(new UserError('GEX_STORE_INVALID_REQUEST', `The upload has ${counted} of its ${size} bytes`));
        } else callback();
      },
    });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.settings.bucket, Key, Body: counter },
      partSize: PART_BYTES,
      queueSize: UPLOAD_QUEUE,
      leavePartsOnError: false,
    });
    const feeding = pipeline(body, counter);
    feeding.catch(() => undefined);
    try {
      await this.run('storing an object in', async () => {
        await Promise.all([feeding, upload.done()]);
      });
    } catch (error) {
      body.destroy();
      counter.destroy();
      throw error;
    }
    return { size: counted };
  }

  async getStream(key: string): Promise<Readable> {
    const answer = await this.run('reading an object of', () =>
      this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.fullKey(key) })),
    );
    const body = answer.Body;
    if (!(body instanceof Readable)) {
      throw new UserError('GEX_OBJECT_STORE_REFUSED', `The object store answered ${key} without a body`);
    }
    // a connection that breaks while the body is read fails like a request: a UserError saying where
    const failure = (error: unknown) =>
      this.failure(networkCode(error as SdkError) ? error : brokenOff(error), 'reading an object of');
    async function* pieces(): AsyncGenerator<Buffer> {
      try {
        for await (const piece of body as Readable) yield piece as Buffer;
      } catch (error) {
        throw failure(error);
      } finally {
        (body as Readable).destroy();
      }
    }
    return Readable.from(pieces(), { objectMode: false });
  }

  async head(key: string): Promise<number | undefined> {
    try {
      const answer = await this.client.send(
        new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.fullKey(key) }),
      );
      return answer.ContentLength ?? 0;
    } catch (error) {
      const e = error as SdkError;
      const missing = e.name === 'NotFound' || e.name === 'NoSuchKey';
      // an answer to HEAD has no body to say why: a missing bucket is a 404 too, a wrong key a bare
      // 403; a list of that one key (a request only on this path) names the cause
      if (missing || e.$metadata?.httpStatusCode === 403)
        await this.run('reading an object of', () =>
          this.client.send(
            new ListObjectsV2Command({ Bucket: this.settings.bucket, Prefix: this.fullKey(key), MaxKeys: 1 }),
          ),
        );
      if (missing) return undefined;
      throw this.failure(error, 'reading an object of');
    }
  }

  async delete(key: string): Promise<void> {
    await this.run('deleting an object of', () =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.fullKey(key) })),
    );
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    const full = keys.map((key) => this.fullKey(key));
    for (let start = 0; start < full.length; start += MAX_KEYS_PER_REQUEST) {
      const batch = full.slice(start, start + MAX_KEYS_PER_REQUEST);
      const command = new DeleteObjectsCommand({
        Bucket: this.settings.bucket,
        Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
      });
      // Content-MD5: S3 requires a checksum here and the SDK sends only its newer ones, which
      // Swift's s3api, older MinIO and Ceph do not know; all of them (and AWS) take MD5
      command.middlewareStack.add(
        (next) => async (args) => {
          const request = args.request as { body?: unknown; headers?: Record<string, string> };
          if (request.headers && typeof request.body === 'string') {
            request.headers['content-md5'] = createHash('md5').update(request.body).digest('base64');
          }
          return next(args);
        },
        { step: 'build', name: 'gexContentMd5' },
      );
      const answer = await this.run('deleting objects of', () => this.client.send(command));
      const failed = (answer.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        const first = failed[0];
        throw new UserError(
          'GEX_OBJECT_STORE_REFUSED',
          this.masked(
            `The object store at ${this.shownEndpoint} refused deleting ${failed.length} objects of s3://${this.settings.bucket}, ` +
              `the first ${excerptQuoted(first.Key ?? '')}: ${first.Code ?? 'error'} ${excerptText(first.Message ?? '')}`,
          ),
        );
      }
    }
  }

  async list(prefix: string, continuation?: string, maxKeys = MAX_KEYS_PER_REQUEST): Promise<ObjectPage> {
    if (!Number.isInteger(maxKeys) || maxKeys < 1 || maxKeys > MAX_KEYS_PER_REQUEST) {
      throw new RangeError(`A list page holds 1..${MAX_KEYS_PER_REQUEST} keys, got ${maxKeys}`);
    }
    const under = prefix === '' ? this.settings.prefix : this.fullKey(prefix.replace(/\/$/, '')) + '/';
    const answer = await this.run('listing the objects of', () =>
      this.client.send(
        new ListObjectsV2Command({
          Bucket: this.settings.bucket,
          Prefix: under,
          MaxKeys: maxKeys,
          ...(continuation ? { ContinuationToken: continuation } : {}),
        }),
      ),
    );
    const objects = (answer.Contents ?? [])
      .filter((o) => o.Key?.startsWith(this.settings.prefix))
      .map((o) => ({
        key: (o.Key ?? '').slice(this.settings.prefix.length),
        size: o.Size ?? 0,
        lastModified: o.LastModified,
      }));
    return { objects, continuation: answer.IsTruncated ? answer.NextContinuationToken : undefined };
  }

  async listMultipart(
    prefix: string,
    continuation?: UploadPage['continuation'],
    maxUploads = MAX_KEYS_PER_REQUEST,
  ): Promise<UploadPage> {
    if (!Number.isInteger(maxUploads) || maxUploads < 1 || maxUploads > MAX_KEYS_PER_REQUEST) {
      throw new RangeError(`A list page holds 1..${MAX_KEYS_PER_REQUEST} uploads, got ${maxUploads}`);
    }
    const under = prefix === '' ? this.settings.prefix : this.fullKey(prefix.replace(/\/$/, '')) + '/';
    const answer = await this.run('listing the multipart uploads of', () =>
      this.client.send(
        new ListMultipartUploadsCommand({
          Bucket: this.settings.bucket,
          Prefix: under,
          MaxUploads: maxUploads,
          ...(continuation ? { KeyMarker: continuation.keyMarker, UploadIdMarker: continuation.uploadIdMarker } : {}),
        }),
      ),
    );
    const uploads = (answer.Uploads ?? [])
      .filter((u) => u.Key?.startsWith(this.settings.prefix) && u.UploadId)
      .map((u) => ({
        key: (u.Key ?? '').slice(this.settings.prefix.length),
        uploadId: u.UploadId ?? '',
        initiated: u.Initiated,
      }));
    const next =
      answer.IsTruncated && answer.NextKeyMarker !== undefined
        ? { keyMarker: answer.NextKeyMarker, uploadIdMarker: answer.NextUploadIdMarker ?? '' }
        : undefined;
    // a server that says "more" without moving its marker would make the caller loop forever
    if (
      next &&
      continuation &&
      next.keyMarker === continuation.keyMarker &&
      next.uploadIdMarker === continuation.uploadIdMarker
    ) {
      throw new UserError(
        'GEX_OBJECT_STORE_REFUSED',
        `The object store at ${this.shownEndpoint} answered the same page of multipart uploads of s3://${this.settings.bucket} twice`,
      );
    }
    return { uploads, continuation: next };
  }

  async presignPut(key: string, size: number, expiresSeconds: number): Promise<string> {
    if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`An object's size must be >= 0, got ${size}`);
    const expiresIn = checkedExpiry(expiresSeconds);
    const command = new PutObjectCommand({ Bucket: this.settings.bucket, Key: this.fullKey(key), ContentLength: size });
    return this.run('signing an upload to', () =>
      getSignedUrl(this.client, command, {
        expiresIn,
        signableHeaders: new Set(['content-length']),
      }),
    );
  }

  async presignGet(key: string, expiresSeconds: number): Promise<string> {
    const expiresIn = checkedExpiry(expiresSeconds);
    const command = new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.fullKey(key) });
    return this.run('signing a download from', () => getSignedUrl(this.client, command, { expiresIn }));
  }

  async createMultipart(key: string): Promise<string> {
    const answer = await this.run('starting a multipart upload to', () =>
      this.client.send(new CreateMultipartUploadCommand({ Bucket: this.settings.bucket, Key: this.fullKey(key) })),
    );
    if (!answer.UploadId) throw new UserError('GEX_OBJECT_STORE_REFUSED', 'The object store answered no upload id');
    return answer.UploadId;
  }

  async presignPart(key: string, uploadId: string, partNumber: number, expiresSeconds: number): Promise<string> {
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
      throw new RangeError(`A part number is 1..${MAX_PART_NUMBER}, got ${partNumber}`);
    }
    const expiresIn = checkedExpiry(expiresSeconds);
    const command = new UploadPartCommand({
      Bucket: this.settings.bucket,
      Key: this.fullKey(key),
      UploadId: uploadId,
      PartNumber: partNumber,
    });
    return this.run('signing an upload to', () => getSignedUrl(this.client, command, { expiresIn }));
  }

  async completeMultipart(key: string, uploadId: string, parts: readonly CompletedPart[]): Promise<void> {
    if (parts.length === 0 || parts.length > MAX_PART_NUMBER) {
      throw new RangeError(`A multipart upload has 1..${MAX_PART_NUMBER} parts, got ${parts.length}`);
    }
    await this.run('completing a multipart upload to', () =>
      this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.settings.bucket,
          Key: this.fullKey(key),
          UploadId: uploadId,
          MultipartUpload: {
            Parts: [...parts]
              .sort((a, b) => a.partNumber - b.partNumber)
              .map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })),
          },
        }),
      ),
    );
  }

  async abortMultipart(key: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(
        new AbortMultipartUploadCommand({ Bucket: this.settings.bucket, Key: this.fullKey(key), UploadId: uploadId }),
      );
    } catch (error) {
      if ((error as SdkError).name === 'NoSuchUpload') return;
      throw this.failure(error, 'aborting a multipart upload to');
    }
  }

  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket }));
    } catch (error) {
      // an answer to HEAD has no body to say why: a list of one key names the cause (a wrong key…)
      if ((error as SdkError).$metadata?.httpStatusCode === 403) {
        await this.run('opening the bucket', () =>
          this.client.send(new ListObjectsV2Command({ Bucket: this.settings.bucket, MaxKeys: 1 })),
        );
      }
      throw this.failure(error, 'opening the bucket');
    }
    const probe = `${this.settings.prefix}.gex-probe-${randomBytes(8).toString('hex')}`;
    await this.run('writing a probe object to', () =>
      this.client.send(new PutObjectCommand({ Bucket: this.settings.bucket, Key: probe, Body: 'gex' })),
    );
    await this.run('deleting a probe object of', () =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: probe })),
    );
  }
}
