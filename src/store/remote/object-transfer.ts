import { got, RequestError, type Got, type PlainResponse, type Response } from 'got';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { describeNetworkError } from '../../common/network-errors.js';
import { isPresignedUrl, maskUrlSignatures } from '../../common/url-signature.js';
import { RetryBudget, SYSTEM_CLOCK, type Clock, type RetryBudgetSettings } from './retry-budget.js';

/**
 * Bytes sent to or read from a bucket at a pre-signed address that a gex server handed out
 * (`uploadParams` of files/prepare, a file's `url`): plain HTTP with no token — the address
 * itself grants the access, for a short while — and no redirect followed. Messages name the
 * address's origin and path only: its query holds the signature.
 */

/** A pre-signed address's answer: short, but bounded whatever the other side sends. */
const MAX_ERROR_TEXT = 4096;
/** Parts of a multipart upload sent at once; each one is held in memory until its PUT is answered. */
export const PARTS_IN_FLIGHT = 2;
/** The largest part accepted from a server's uploadParams: a part is held whole in memory. */
export const MAX_PART_BYTES = 512 * 1024 * 1024;

export interface PresignedPart {
  readonly partNumber: number;
  readonly url: string;
}

export interface UploadedPart {
  readonly partNumber: number;
  readonly etag: string;
}

export interface ObjectTransferOptions {
  retry: RetryBudgetSettings;
  clock?: Clock;
  logger?: Logger;
  /** who handed out the addresses, for messages: "the Storage API at http://…" */
  issuer: string;
}

/**
 * `url` checked to be a pre-signed http(s) address (SigV4's query: nothing else goes to an origin
 * other than the server's); its shown form without the query (the signature).
 */
export function presignedAddress(url: unknown, issuer: string, what: string): { url: URL; shown: string } {
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (
    parsed === undefined ||
    (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') ||
    parsed.username !== '' ||
    !isPresignedUrl(parsed.href)
  )
    throw new UserError(
      'GEX_STORAGE_API_REFUSED',
      `${issuer} answered ${what} with something other than a pre-signed http(s) address; is it a gex server?`,
    );
  return { url: parsed, shown: `${parsed.origin}${parsed.pathname}`.slice(0, 300) };
}

export class ObjectTransfer {
  private readonly http: Got;

  constructor(private readonly options: ObjectTransferOptions) {
    this.http = got.extend({
      throwHttpErrors: false,
      retry: { limit: 0 },
      followRedirect: false,
      // the only header that goes there besides what a request needs: never a token
      headers: { 'user-agent': 'gex object transfer' },
    });
  }

  /**
   * PUTs `size` bytes of `body()` to a pre-signed address (signed for exactly that length). A 5xx,
   * 408, 429 or a network failure is sent again with a new `body()` within the budget.
   */
  async put(url: string, body: () => NodeJS.ReadableStream, size: number): Promise<string | undefined> {
    return this.putRetried(url, 'upload', () => body() as Readable, size);
  }

  /**
   * Sends `body` as the parts of a multipart upload, `partSize` bytes each (the last one shorter),
   * PARTS_IN_FLIGHT at a time: at most that many parts plus the one being read are in memory.
   * Returns each part's ETag, in order. A failed part is sent again (its bytes are held).
   */
  async putParts(
    parts: readonly PresignedPart[],
    partSize: number,
    body: NodeJS.ReadableStream,
    size: number,
  ): Promise<UploadedPart[]> {
    const expected = Math.max(1, Math.ceil(size / partSize));
    if (parts.length !== expected)
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `${this.options.issuer} handed out ${parts.length} upload parts of ${partSize} bytes for a file of ${size} bytes (${expected} expected); is it a gex server?`,
      );
    const done: UploadedPart[] = [];
    const inFlight = new Set<Promise<void>>();
    let failed: unknown;
    const send = (part: PresignedPart, bytes: Buffer) => {
      const sending = this.putRetried(part.url, `upload part ${part.partNumber}`, () => bytes, bytes.length).then(
        (etag) => {
          if (etag === undefined)
            throw new UserError(
              'GEX_STORAGE_API_REFUSED',
              `The object store did not answer part ${part.partNumber} of the upload with an ETag; it cannot be completed.`,
            );
          done.push({ partNumber: part.partNumber, etag });
        },
      );
      const tracked = sending
        .catch((error: unknown) => {
          failed ??= error;
        })
        .finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    };
    let index = 0;
    for await (const bytes of partsOf(body, partSize)) {
      if (failed !== undefined) break;
      const part = parts[index++];
      if (part === undefined) {
        // never cut: a file that grew since its size was taken is refused, not uploaded short
        failed = new UserError(
          'GEX_STORAGE_API_REFUSED',
          `The file to upload is longer than the ${size} bytes announced (it changed while it was read); upload it again.`,
        );
        break;
      }
      send(part, bytes);
      while (inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (failed !== undefined) throw failed as Error;
    if (done.length !== expected)
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The file to upload ended after ${done.length} of its ${expected} parts: it is shorter than the ${size} bytes announced.`,
      );
    return done.sort((a, b) => a.partNumber - b.partNumber);
  }

  /** GETs a pre-signed address and streams the bytes into `out`; returns how many. One attempt. */
  async download(url: string, out: NodeJS.WritableStream): Promise<number> {
    const { url: target, shown } = presignedAddress(url, this.options.issuer, 'a file with url');
    const budget = new RetryBudget(this.options.retry, this.options.clock ?? SYSTEM_CLOCK);
    const stream = this.http.stream(target, {
      timeout: { connect: budget.connectTimeoutMs(), socket: budget.attemptTimeoutMs() },
    });
    let response: PlainResponse;
    try {
      response = await new Promise<PlainResponse>((resolve, reject) => {
        stream.once('response', resolve);
        stream.once('error', reject);
      });
    } catch (error) {
      throw this.unreachable(error, 'GET', shown);
    }
    if (response.statusCode !== 200) {
      let text = '';
      for await (const chunk of stream) {
        text += String(chunk);
        if (text.length > MAX_ERROR_TEXT) break;
      }
      stream.destroy();
      throw this.refused('GET', shown, response.statusCode, text);
    }
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    try {
      await pipeline(stream, out);
    } catch (error) {
      throw this.unreachable(error, 'GET', shown);
    }
    return bytes;
  }

  private async putRetried(
    url: string,
    what: string,
    body: () => Readable | Buffer,
    size: number,
  ): Promise<string | undefined> {
    const { url: target, shown } = presignedAddress(url, this.options.issuer, `the address to ${what}`);
    const budget = new RetryBudget(this.options.retry, this.options.clock ?? SYSTEM_CLOCK);
    for (let attempt = 1; ; attempt++) {
      let response: Response<string> | undefined;
      let failure: unknown;
      try {
        response = await this.http(target, {
          method: 'PUT',
          body: body(),
          headers: { 'content-length': String(size) },
          responseType: 'text',
          timeout: { connect: budget.connectTimeoutMs(), socket: budget.attemptTimeoutMs() },
        });
      } catch (error) {
        failure = error;
      }
      if (response !== undefined && response.statusCode >= 200 && response.statusCode < 300) {
        const etag = response.headers.etag;
        return typeof etag === 'string' && /^"?[A-Za-z0-9-]{1,200}"?$/.test(etag) ? etag : undefined;
      }
      if (failure !== undefined && !(failure instanceof RequestError)) throw failure as Error;
      const status = response?.statusCode;
      const retryable = status === undefined || status >= 500 || status === 408 || status === 429;
      const delay = retryable ? budget.delayBefore(attempt) : null;
      if (delay === null) {
        if (response === undefined) throw this.unreachable(failure, 'PUT', shown);
        throw this.refused('PUT', shown, response.statusCode, response.body.slice(0, MAX_ERROR_TEXT));
      }
      this.options.logger?.info(
        `Object store PUT ${shown} (${what}): ${status ?? describeNetworkError(failure as RequestError)}; retry ${attempt} in ${(delay / 1000).toFixed(1)} s`,
      );
      await budget.sleep(delay);
    }
  }

  private refused(method: string, shown: string, status: number, text: string): UserError {
    // S3's error document: <Code>…</Code><Message>…</Message>
    const code = /<Code>([A-Za-z0-9.]{1,64})<\/Code>/.exec(text)?.[1];
    const message = /<Message>([^<]{1,300})<\/Message>/.exec(text)?.[1];
    const reason = [code, message].filter(Boolean).join(': ') || `HTTP ${status}`;
    return new UserError(
      'GEX_STORAGE_API_REFUSED',
      maskUrlSignatures(
        `The object store refused ${method} ${shown} (${status}): ${reason}. ` +
          (status === 403
            ? 'The pre-signed address may have expired or been signed for another size: start the upload again.'
            : 'Start the transfer again; if it keeps failing, check the object store behind the server.'),
      ),
    );
  }

  private unreachable(error: unknown, method: string, shown: string): unknown {
    if (!(error instanceof RequestError)) return error;
    return new UserError(
      'GEX_STORAGE_API_UNREACHABLE',
      `The object store at ${shown} cannot be reached (${method}): ${describeNetworkError(error)}; the server hands out addresses its clients must reach.`,
      { cause: error },
    );
  }
}

/** `body` cut into Buffers of exactly `partSize` bytes (the last one shorter); one part held at a time. */
async function* partsOf(body: NodeJS.ReadableStream, partSize: number): AsyncGenerator<Buffer> {
  let part = Buffer.allocUnsafe(partSize);
  let filled = 0;
  for await (const piece of body as AsyncIterable<Buffer | string>) {
    let buffer = typeof piece === 'string' ? Buffer.from(piece) : piece;
    while (buffer.length > 0) {
      const copied = buffer.copy(part, filled, 0, Math.min(buffer.length, partSize - filled));
      filled += copied;
      buffer = buffer.subarray(copied);
      if (filled === partSize) {
        yield part;
        part = Buffer.allocUnsafe(partSize);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield part.subarray(0, filled);
}
