import { constants as bufferConstants } from 'node:buffer';
import type { Readable } from 'node:stream';
import { UserError } from '../../common/errors.js';
import { plural } from '../../common/text.js';

const MiB = 1024 * 1024;

/**
 * The default limit of one response body, counted after decompression. Far above any page a real
 * API sends, and far below what a hostile or broken API (a gzip bomb, an endless body) could make
 * gex hold. A page is parsed whole (as GE does) and the parsed records take about ten times the
 * body in heap (measured: a 256 MiB page of small records → 2.4 GB of heap, 18 s to parse), so a
 * larger page would exhaust a default Node.js heap anyway; bodies over V8's longest string
 * (~512 MiB) could not be decoded at all.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 256 * MiB;

/** The body is decoded as one string: a limit above V8's longest string could never be decoded. */
export const LARGEST_MAX_RESPONSE_BYTES = bufferConstants.MAX_STRING_LENGTH;

const SMALLEST_MAX_RESPONSE_BYTES = 1024;

export const MAX_RESPONSE_SIZE_VARIABLE = 'GEX_MAX_RESPONSE_SIZE';

const UNITS: Record<string, number> = { '': 1, k: 1024, kib: 1024, m: MiB, mib: MiB, g: 1024 * MiB, gib: 1024 * MiB };

/** `GEX_MAX_RESPONSE_SIZE`: bytes, or a number with K, M or G (KiB, MiB, GiB); unset = the default. */
export function maxResponseBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[MAX_RESPONSE_SIZE_VARIABLE]?.trim();
  if (!text) return DEFAULT_MAX_RESPONSE_BYTES;
  const match = /^(\d+)\s*([a-z]*)$/i.exec(text);
  const unit = match ? UNITS[match[2].toLowerCase()] : undefined;
  const bytes = match && unit ? Number(match[1]) * unit : NaN;
  if (!(bytes >= SMALLEST_MAX_RESPONSE_BYTES && bytes <= LARGEST_MAX_RESPONSE_BYTES)) {
    throw new UserError(
      'GEX_SETTING_INVALID',
      `${MAX_RESPONSE_SIZE_VARIABLE} must be a size from 1K to ${Math.floor(LARGEST_MAX_RESPONSE_BYTES / MiB)}M (bytes, or a number with K, M or G), got "${text}"`,
    );
  }
  return bytes;
}

export function formatBytes(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return plural(bytes, 'byte');
}

/** A response body over the limit: the download was stopped. */
export class ResponseTooLarge extends UserError {
  constructor(what: string, limit: number) {
    super(
      'GEX_API_RESPONSE_TOO_LARGE',
      `The response to ${what} is too large: over ${formatBytes(limit)} once decompressed, the limit of one response. ` +
        `The download was stopped. Page the data in smaller pieces, or raise ${MAX_RESPONSE_SIZE_VARIABLE} if the API really sends such pages.`,
    );
    this.name = 'ResponseTooLarge';
  }
}

/**
 * Reads a (decompressed) response stream into one buffer, counting as it goes: past `limit`
 * bytes the stream is destroyed, so memory stays at the limit whatever the server sends — a
 * few MB of gzip may decompress to many GB.
 */
export function readLimited(stream: Readable, limit: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        stream.destroy();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    stream.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    // on, not once: a destroyed got stream may report more than one error
    stream.on('error', reject);
  });
}
