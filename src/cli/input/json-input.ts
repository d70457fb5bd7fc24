import type { Readable } from 'node:stream';
import { UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';
import { decodeJson, JsonSyntaxError, type JsonValue } from '../../json/index.js';
import { MAX_DOCUMENT_BYTES, readInput, sourceName } from './input-source.js';

/** JSON that a person gives (a file, an edited file): decoded exactly, or an error naming the line and column. */
export function decodeJsonText(text: string, source: string): JsonValue {
  try {
    return decodeJson(text);
  } catch (e) {
    // the decoder's message names the line and column
    if (e instanceof JsonSyntaxError)
      throw new UserError('GEX_INPUT_INVALID', `${source} is not valid JSON: ${displayText(e.message)}`);
    throw e;
  }
}

/** A JSON document from a file, or from standard input for `-`. */
export async function readJsonFile(file: string, stdin: Readable = process.stdin): Promise<JsonValue> {
  return decodeJsonText(await readInput(file, MAX_DOCUMENT_BYTES, stdin), sourceName(file));
}
