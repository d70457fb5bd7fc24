import type { Readable } from 'node:stream';
import { UserError } from '../common/errors.js';
import { displayText } from '../common/log-text.js';
import { decodeJson, JsonSyntaxError, type JsonValue } from '../json/index.js';
import { MAX_DOCUMENT_BYTES, readInput, sourceName } from './input-source.js';

/** JSON that a person gives (a file, an edited file): decoded exactly, or an error naming the line and column. */

/** Line and column (1-based) of a character offset, for JSON errors a person can find. */
export function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, Math.max(0, position));
  const line = before.split('\n').length;
  return `line ${line}, column ${position - before.lastIndexOf('\n')}`;
}

/** JSON text decoded, or a user error naming where it is broken. */
export function decodeJsonText(text: string, source: string): JsonValue {
  try {
    return decodeJson(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError)
      throw new UserError(
        'GEX_INPUT_INVALID',
        `${source} is not valid JSON (${lineAndColumn(text, e.position)}): ${displayText(e.message)}`,
      );
    throw e;
  }
}

/** A JSON document from a file, or from standard input for `-`. */
export async function readJsonFile(file: string, stdin: Readable = process.stdin): Promise<JsonValue> {
  return decodeJsonText(await readInput(file, MAX_DOCUMENT_BYTES, stdin), sourceName(file));
}
