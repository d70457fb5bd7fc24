import { constants } from 'node:fs';
import { lstat, open, rename, rm, unlink } from 'node:fs/promises';
import type { Logger } from '../common/logger.js';
import { displayText } from '../common/log-text.js';
import { resolveInside, unsafeFileNameProblem } from '../common/safe-path.js';
import { plural } from '../common/text.js';
import type { DataFolder } from './data-folder.js';

/** The record of what the last run wrote to out/tables, in the data folder (next to its run lock). */
const RECORD_FILE = '.gex-tables.json';
/** A record is a list of file names: anything bigger is not gex's and is ignored. */
const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/**
 * A rerun of a data folder must not leave the tables of the previous run next to its own (a table
 * the configuration no longer produces would still be picked up). gex removes only what it wrote
 * itself: each run records its table files and manifests, and the next run removes exactly those,
 * in out/tables itself — never a folder, never through a symbolic link (a link in out/tables is
 * left alone; out/ or out/tables being one is refused), never another file the user put there.
 */
export class PreviousTables {
  private readonly recordFile: string;

  constructor(
    private readonly folder: DataFolder,
    private readonly logger: Logger,
  ) {
    this.recordFile = resolveInside(folder.dir, RECORD_FILE);
  }

  /** Removes the files the previous run recorded; returns the names removed. */
  async remove(): Promise<string[]> {
    const names = await this.readRecord();
    if (names.length === 0) return [];
    // out/ or out/tables being a link is refused (a UserError): removing inside it could reach anywhere
    if (!(await this.folder.guard.inspect(this.folder.tablesDir, 'folder'))) return [];
    const removed: string[] = [];
    for (const name of names) {
      const file = this.folder.tableFile(name);
      const stat = await lstat(file).catch(() => undefined);
      if (!stat) continue;
      if (!stat.isFile()) {
        // gex writes regular files: a link or a folder by that name is someone else's
        this.logger.warn(
          { table: name },
          `Left ${displayText(name)} in out/tables: it is ${stat.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}, not a table gex wrote`,
        );
        continue;
      }
      await unlink(file).catch((error: unknown) => {
        throw this.folder.guard.failure(error, file, 'remove');
      });
      removed.push(name);
    }
    if (removed.length > 0)
      this.logger.info(
        { tables: removed.length },
        `Removed ${plural(removed.length, 'file')} of the previous run from out/tables`,
      );
    return removed;
  }

  /** Records the tables this run wrote (each CSV file and its manifest). */
  async record(tableFiles: string[]): Promise<void> {
    const files = tableFiles.flatMap((file) => [file, `${file}.manifest`]);
    // written beside and renamed over: a link planted at the record's name is replaced, never followed
    const temporary = `${this.recordFile}.${process.pid}.tmp`;
    try {
      await rm(temporary, { force: true });
      const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
      try {
        await handle.writeFile(`${JSON.stringify({ files }, null, 1)}\n`);
      } finally {
        await handle.close();
      }
      await rename(temporary, this.recordFile);
    } catch (error) {
      throw this.folder.guard.failure(error, this.recordFile, 'write');
    }
  }

  /** The recorded names that are plain file names (the record is a file anyone could edit). */
  private async readRecord(): Promise<string[]> {
    let text: string;
    try {
      // O_NOFOLLOW: a link planted at the record's name is not read through
      const handle = await open(this.recordFile, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const { size } = await handle.stat();
        if (size > MAX_RECORD_BYTES) return this.ignored(`it is over ${plural(MAX_RECORD_BYTES, 'byte')}`);
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      return this.ignored((error as Error).message);
    }
    let files: unknown;
    try {
      files = (JSON.parse(text) as { files?: unknown })?.files;
    } catch {
      return this.ignored('it is not JSON');
    }
    if (!Array.isArray(files)) return this.ignored('it has no list "files"');
    return files.filter(
      (name): name is string =>
        typeof name === 'string' && unsafeFileNameProblem(name) === null && !name.startsWith('.gex-'),
    );
  }

  private ignored(why: string): string[] {
    this.logger.warn(`Ignoring ${RECORD_FILE} in the data folder (${why}): no table of the previous run is removed`);
    return [];
  }
}
