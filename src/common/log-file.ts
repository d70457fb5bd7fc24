import { closeSync, constants, fstatSync, openSync, realpathSync, writeSync } from 'node:fs';
import path from 'node:path';
import { UserError } from './errors.js';
import { displayText } from './log-text.js';
import { isInside } from './safe-path.js';

/**
 * Appends to an existing file or a new one; never through a symbolic link at the file itself, never
 * anything but a regular file (a FIFO would block, a device is not a log), never blocking at open.
 */
const APPEND =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The file `--log-file` names: every log line is appended to it as it is written (synchronously,
 * so the lines before a crash are in it). A write that fails (a full disk) is said once on stderr;
 * the file then gets no more lines and the command goes on.
 */
export class LogFile {
  private fd: number | undefined;

  private constructor(
    fd: number,
    readonly path: string,
    private readonly stderr: NodeJS.WritableStream,
  ) {
    this.fd = fd;
  }

  /**
   * Opens `file` for appending (created with mode 0600: a log says what ran where). Refused with a
   * UserError: a path inside one of `guarded` (folders gex writes and removes files in: a log there
   * would become a table or be deleted), reached directly or through a linked folder; a symbolic
   * link; anything but a regular file.
   */
  static open(file: string, guarded: readonly string[], stderr: NodeJS.WritableStream = process.stderr): LogFile {
    const absolute = path.resolve(file);
    const shown = displayText(file);
    const refuse = (folder: string) =>
      new UserError(
        'GEX_FILE_NOT_WRITTEN',
        `Refusing --log-file ${shown}: it is inside ${displayText(folder)}, which gex writes and clears; ` +
          'put the log elsewhere',
      );
    // as written first: a guarded folder that does not exist yet (out/ before a first run) is refused too
    for (const folder of guarded) if (isInside(folder, absolute)) throw refuse(folder);
    let real: string;
    try {
      real = path.join(realpathSync(path.dirname(absolute)), path.basename(absolute));
    } catch (error) {
      throw new UserError(
        'GEX_FILE_NOT_WRITTEN',
        `Cannot use --log-file ${shown}: its folder cannot be reached (${codeOf(error)})`,
      );
    }
    for (const folder of guarded) if (isInside(realPathOr(folder), real)) throw refuse(folder);
    let fd: number;
    try {
      fd = openSync(real, APPEND, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === 'ELOOP' ? 'it is a symbolic link' : code === 'ENXIO' ? 'it is not a regular file' : (code ?? 'error');
      throw new UserError('GEX_FILE_NOT_WRITTEN', `Cannot open --log-file ${shown}: ${why}`);
    }
    if (!fstatSync(fd).isFile()) {
      closeSync(fd);
      throw new UserError('GEX_FILE_NOT_WRITTEN', `Cannot use --log-file ${shown}: it is not a regular file`);
    }
    return new LogFile(fd, absolute, stderr);
  }

  write(text: string): void {
    if (this.fd === undefined) return;
    try {
      const bytes = Buffer.from(text, 'utf8');
      for (let at = 0; at < bytes.length;) at += writeSync(this.fd, bytes, at);
    } catch (error) {
      this.close();
      this.stderr.write(
        `gex: the log file ${displayText(this.path)} cannot be written (${codeOf(error)}): no more lines go to it\n`,
      );
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // closing is all that was left to do
    }
  }
}

function realPathOr(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? 'error';
}
