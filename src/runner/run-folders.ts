import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationError, UserError } from '../common/errors.js';
import { displayId } from '../common/log-text.js';
import { encodePathSegment, isInside, resolveInside } from '../common/safe-path.js';
import { DataFolder } from '../extractor/data-folder.js';
import { FolderGuard } from '../extractor/folder-guard.js';

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
 * a case-insensitive disk — is refused before anything in it is removed. Nothing is created,
 * written or removed through a symbolic link below the data folder (`rows`, a row's folder, `in`,
 * `out`…): a link there is refused (FolderGuard).
 */
export class RunFolders {
  private readonly rowsRoot: string;
  private readonly guard: FolderGuard;
  /** `dev:ino` of each folder prepared in this run → its row id */
  private readonly prepared = new Map<string, string | null>();

  constructor(
    private readonly dataDir: string,
    /** row id → folder name; a test may give one that folds case, as such a disk does */
    private readonly folderName: (rowId: string) => string = encodePathSegment,
  ) {
    this.rowsRoot = path.resolve(dataDir, 'rows');
    this.guard = new FolderGuard(dataDir);
  }

  /** The unit's folder as a data folder whose writes are guarded from the data folder down. */
  dataFolder(folder: RunFolder): DataFolder {
    return new DataFolder(folder.dir, this.dataDir);
  }

  /**
   * Before the first request of a run: no path the units will write is a symbolic link, and each
   * folder they write in (or remove) takes a file. A row's folder is removed and made again, so
   * only it and the folders of an earlier run in it are probed; inside it nothing is followed.
   * `input`: the run writes the units' input too (config.json, in/), as a stored configuration's does.
   */
  async checkWritable(units: RunFolder[], options: { input: boolean }): Promise<void> {
    // the data folder itself is made by a run as it always was (the CLI's run lock makes it first)
    await this.guard.mkdir(this.dataDir);
    const proven = new Set<string>();
    for (const folder of units) {
      if (folder.rowId === null) {
        await this.dataFolder(folder).checkWritable(options);
        continue;
      }
      this.assertRowFolder(folder);
      await this.guard.proveWritable(this.rowsRoot, proven);
      if (!(await this.guard.inspect(folder.dir, 'folder'))) continue;
      const data = new DataFolder(folder.dir);
      // a link inside a row folder is removed with it, never followed: only real folders (in real
      // folders) are probed, each listed after the folder it is in
      const real = new Set([path.dirname(folder.dir)]);
      for (const dir of [
        folder.dir,
        data.inputDir,
        data.inputTablesDir,
        data.outputDir,
        data.tablesDir,
        ...data.workDirs,
      ]) {
        if (!real.has(path.dirname(dir)) || !(await lstat(dir).catch(() => undefined))?.isDirectory()) continue;
        real.add(dir);
        await this.guard.proveWritable(dir, proven);
      }
    }
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
    const data = this.dataFolder(folder);
    if (folder.rowId === null) {
      await this.guard.remove(data.outputDir);
    } else {
      this.assertRowFolder(folder);
      await this.assertNotTaken(folder);
      await this.guard.remove(folder.dir);
    }
    await this.guard.mkdir(data.inputDir);
    await this.guard.mkdir(data.tablesDir);
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
        'GEX_TABLE_FILES_MISSING',
        `The tables of ${folder.rowId === null ? 'the configuration' : `row ${displayId(folder.rowId)}`} are gone from ${folder.relative}/out/tables ` +
          `(${missing.map(displayId).join(', ')}) after the run wrote them; no state is saved.`,
      );
    }
  }

  /** A row folder is a direct child of `rows/`: the last line of defence before a recursive rm. */
  private assertRowFolder(folder: RunFolder): void {
    const dir = path.resolve(folder.dir);
    if (!isInside(this.rowsRoot, dir) || path.dirname(dir) !== this.rowsRoot) {
      throw new ApplicationError(
        'GEX_INTERNAL',
        `Refusing to remove ${dir}: a row folder must be directly inside ${this.rowsRoot}`,
      );
    }
  }

  private async assertNotTaken(folder: RunFolder): Promise<void> {
    const existing = await this.guard.inspect(folder.dir);
    if (!existing) return;
    const key = `${existing.dev}:${existing.ino}`;
    if (!this.prepared.has(key)) return;
    const other = this.prepared.get(key);
    throw new UserError(
      'GEX_CONFIG_INVALID',
      `Rows ${displayId(other ?? '')} and ${displayId(folder.rowId ?? '')} would share the folder ${folder.relative}: ` +
        'the file system does not tell their names apart (a case-insensitive disk?). Rename one of the rows or use a case-sensitive data folder.',
    );
  }
}
