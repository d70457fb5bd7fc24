import { createHash } from 'node:crypto';
import path from 'node:path';

/**
 * Ids and names that come from configurations, stores and API responses are opaque text. These
 * helpers are the one place where such text becomes part of a file system path.
 */

/** The longest file name (in bytes) that Linux, macOS and Windows file systems all accept. */
export const NAME_MAX_BYTES = 255;

/** Longest encoded segment kept whole; longer ones keep a prefix and end in `~<sha256>`. */
const MAX_ENCODED = 160;

/**
 * Encodes any string as one safe path segment, injectively: ASCII letters, digits, `_` and `-` are
 * kept, every other UTF-8 byte becomes `%XX` (`.`, `/`, `\`, `%`, NUL included, so the result is
 * never `.`, `..`, absolute or multi-segment). The empty string is `~` and a segment whose encoding
 * is over 160 bytes keeps its first 95 bytes and ends in `~` and the SHA-256 of the original; `~`
 * appears in no other encoding, so two different ids never share a folder.
 */
export function encodePathSegment(id: string): string {
  if (id === '') return '~';
  let encoded = '';
  for (const byte of Buffer.from(id, 'utf8')) {
    const c = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (encoded.length <= MAX_ENCODED) return encoded;
  let prefix = encoded.slice(0, 95);
  // never cut an escape in half
  const percent = prefix.lastIndexOf('%');
  if (percent > prefix.length - 3) prefix = prefix.slice(0, percent);
  return `${prefix}~${createHash('sha256').update(id, 'utf8').digest('hex')}`;
}

/** The inverse of encodePathSegment for segments that are not shortened (`~…`); null otherwise. */
export function decodePathSegment(segment: string): string | null {
  if (segment === '~') return '';
  if (segment.includes('~') || !/^(?:[A-Za-z0-9_-]|%[0-9A-F]{2})+$/.test(segment)) return null;
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    if (segment[i] === '%') {
      bytes.push(parseInt(segment.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(segment.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Whether `target` is `root` itself or lies below it (both resolved; no `..` escapes). */
export function isInside(root: string, target: string): boolean {
  return !leavesRoot(path.relative(path.resolve(root), path.resolve(target)));
}

/** A relative path that climbs out of its base (`..`, `../x`) or is absolute (another drive). */
function leavesRoot(relative: string): boolean {
  return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
}

/** Why a single file name is unsafe to write (null when it is safe): a problem text for errors. */
export function unsafeFileNameProblem(name: string): string | null {
  if (name === '') return 'is empty';
  if (name.includes('\u0000')) return 'contains a NUL byte';
  if (name.includes('/') || name.includes('\\')) return 'contains a path separator ("/" or "\\")';
  if (name === '.' || name === '..') return `is "${name}", which names a folder, not a file`;
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > NAME_MAX_BYTES)
    return `is ${bytes} bytes long, over the file system's limit of ${NAME_MAX_BYTES} bytes per file name`;
  return null;
}

/**
 * `root` joined with `segments`, refusing any result outside `root`. A last line of defence: callers
 * validate or encode names first and report their own errors; this one throws an Error naming the
 * offending path, so a slip can never touch a file elsewhere.
 */
export function resolveInside(root: string, ...segments: string[]): string {
  for (const segment of segments) {
    if (segment.includes('\u0000')) throw new Error(`Refusing a path with a NUL byte below ${root}`);
  }
  const target = path.resolve(root, ...segments);
  if (leavesRoot(path.relative(path.resolve(root), target))) {
    throw new Error(`Refusing to use ${JSON.stringify(segments.join('/'))}: it leads outside ${root}`);
  }
  return target;
}
