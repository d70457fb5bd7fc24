import { lstat, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationError, UserError } from '../common/errors.js';
import { displayId } from '../common/log-text.js';
import { encodePathSegment, isInside, resolveInside } from '../common/safe-path.js';
import { DataFolder } from '../extractor/data-folder.js';

/** Where one unit of a run (a row, or the configuration without rows) reads and writes. */
export interface RunFolder {
  /** absolute path */
  dir: string;
  /** relative to the data folder, with `/`: `rows/<encoded id>`, or `.` for the data folder itself */
  relative: string;
  /** null: the configuration without rows, which runs in the data folder itself */
  rowId: string | null;
}

/**
 * The folders of one run inside the data folder. A row id is opaque text, so a row's folder is
 * `rows/` + the row id encoded as one safe segment (encodePathSegment: a readable id such as
 * `users-2` stays as it is, anything else is percent-encoded, long ids end in a hash): never `..`,
 * never nested, never shared by two ids. Only these folders (and `out/` of the data folder) are
 * ever removed, and each removal is checked to lie inside `rows/` first. A folder that another row
 * of this run already uses — two names one file system does not tell apart, such as `A` and `a` on
 * a case-insensitive disk — is refused before anything in it is removed.
 */
export class RunFolders {
  private readonly rowsRoot: string;
  /** `dev:ino` of each folder prepared in this run → its row id */
  private readonly prepared = new Map<string, string | null>();

  constructor(
    private readonly dataDir: string,
    /** row id → folder name; a test may give one that folds case, as such a disk does */
    private readonly folderName: (rowId: string) => string = encodePathSegment,
  ) {
    this.rowsRoot = path.resolve(dataDir, 'rows');
  }

  /** The data folder itself, for a configuration without rows. */
  root(): RunFolder {
    return { dir: path.resolve(this.dataDir), relative: '.', rowId: null };
  }

  row(rowId: string): RunFolder {
    const name = this.folderName(rowId);
    return { dir: resolveInside(this.rowsRoot, name), relative: `rows/${name}`, rowId };
  }

  /**
   * An empty folder for the unit's run: a row's folder is removed and created again; for the
   * configuration without rows only `out/` is removed (the data folder is the user's).
   */
  async prepare(folder: RunFolder): Promise<void> {
    const data = new DataFolder(folder.dir);
    if (folder.rowId === null) {
      await rm(data.outputDir, { recursive: true, force: true });
    } else {
      this.assertRowFolder(folder);
      await this.assertNotTaken(folder);
      await rm(folder.dir, { recursive: true, force: true });
    }
    await mkdir(data.inputDir, { recursive: true });
    await mkdir(data.tablesDir, { recursive: true });
    const created = await lstat(folder.dir);
    this.prepared.set(`${created.dev}:${created.ino}`, folder.rowId);
  }

  /**
   * Every table a unit reported is still in its folder — a later unit of the same run cannot have
   * removed it. Throws naming the missing files.
   */
  async confirmTables(folder: RunFolder, files: string[]): Promise<void> {
    const missing: string[] = [];
    const data = new DataFolder(folder.dir);
    for (const file of files) {
      if (!(await lstat(data.tableFile(file)).catch(() => undefined))) missing.push(file);
    }
    if (missing.length > 0) {
      throw new ApplicationError(
        `The tables of ${folder.rowId === null ? 'the configuration' : `row ${displayId(folder.rowId)}`} are gone from ${folder.relative}/out/tables ` +
          `(${missing.map(displayId).join(', ')}) after the run wrote them; no state is saved.`,
      );
    }
  }

  /** A row folder is a direct child of `rows/`: the last line of defence before a recursive rm. */
  private assertRowFolder(folder: RunFolder): void {
    const dir = path.resolve(folder.dir);
    if (!isInside(this.rowsRoot, dir) || path.dirname(dir) !== this.rowsRoot) {
      throw new ApplicationError(`Refusing to remove ${dir}: a row folder must be directly inside ${this.rowsRoot}`);
    }
  }

  private async assertNotTaken(folder: RunFolder): Promise<void> {
    const existing = await lstat(folder.dir).catch(() => undefined);
    if (!existing) return;
    const key = `${existing.dev}:${existing.ino}`;
    if (!this.prepared.has(key)) return;
    const other = this.prepared.get(key);
    throw new UserError(
      `Rows ${displayId(other ?? '')} and ${displayId(folder.rowId ?? '')} would share the folder ${folder.relative}: ` +
        'the file system does not tell their names apart (a case-insensitive disk?). Rename one of the rows or use a case-sensitive data folder.',
    );
  }
}
