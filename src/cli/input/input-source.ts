import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';

/** The name that means standard input wherever the command line takes a file (`--file -`). */
export const STDIN = '-';

/** A configuration document (import, `--file`) — many rows of up to 4 MB each. */
export const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;
/** One value (`--set-file`, `--set-secret`): a configuration body holds at most 4 MB. */
export const MAX_VALUE_BYTES = 4 * 1024 * 1024;

/** How a source is named in messages: the file as safe text, or "standard input". */
export function sourceName(source: string): string {
  return source === STDIN ? 'standard input' : displayText(source);
}

/**
 * The text of a file, or of standard input for `-`: read up to `maxBytes` (more is refused, so a
 * stream that never ends cannot fill memory) and checked to be UTF-8. Messages name the source,
 * never its content (it may be a secret).
 */
export async function readInput(source: string, maxBytes: number, stdin: Readable = process.stdin): Promise<string> {
  const stream = source === STDIN ? stdin : createReadStream(source);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += (chunk as Buffer).length;
      if (size > maxBytes)
        throw new UserError(
          'GEX_INPUT_INVALID',
          `${sourceName(source)} holds more than ${maxBytes} bytes: that is more than gex reads for one input`,
        );
      chunks.push(chunk as Buffer);
    }
  } catch (e) {
    if (e instanceof UserError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError('GEX_INPUT_INVALID', `No such file: ${sourceName(source)}`);
    if (code === 'EISDIR') throw new UserError('GEX_INPUT_INVALID', `${sourceName(source)} is a folder, not a file`);
    throw new UserError('GEX_INPUT_INVALID', `Cannot read ${sourceName(source)}: ${(e as Error).message}`);
  } finally {
    if (source !== STDIN) (stream as ReturnType<typeof createReadStream>).destroy();
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new UserError('GEX_INPUT_INVALID', `${sourceName(source)} is not UTF-8 text`);
  }
}
