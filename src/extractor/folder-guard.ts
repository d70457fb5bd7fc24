import { randomBytes } from 'node:crypto';
import { constants, lstatSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, rename, rm, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../common/errors.js';
import { fileInTheWay } from '../common/file-in-the-way.js';
import { displayText } from '../common/log-text.js';

/** A path below the data folder that gex will not use: a symbolic link, or not the kind of entry it needs. */
export class UnsafeDataPath extends UserError {
  constructor(message: string) {
    super('GEX_DATA_FOLDER_UNSAFE', message);
    this.name = 'UnsafeDataPath';
  }
}

/** The data folder (or a folder in it) cannot be written: permissions, a read-only or full disk. */
export class DataFolderNotWritable extends UserError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('GEX_DATA_FOLDER_NOT_WRITABLE', message, options);
    this.name = 'DataFolderNotWritable';
  }
}

/** Errors of the environment, not of gex: each becomes a DataFolderNotWritable naming the path. */
const WRITE_FAILURES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
};

/** Flags of every file gex creates below the data folder: a new file, never reached through a link. */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Everything gex creates, writes or removes below a data folder goes through here, so that no
 * symbolic link planted in the folder (by whoever else can write it) can send a write, a recursive
 * remove or a new folder elsewhere: every component below the root is checked with lstat right
 * before it is used, a link at any of them is refused (a UserError naming it), and files are
 * created with O_EXCL | O_NOFOLLOW (a link that appears after the check is not followed either).
 * The root itself is the user's to choose and may be a link.
 *
 * What remains: Node has no openat(), so a process racing gex — swapping a folder that was just
 * checked for a link between the lstat and the use — could still redirect that one operation. The
 * window is a few system calls; preventing it would need a file descriptor per folder.
 */
export class FolderGuard {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /**
   * Checks `target` and the folders leading to it from the root: none may be a link, each folder
   * must be a folder, and `target` (when it exists) of the kind given. Returns its lstat, or
   * undefined when it (or a folder leading to it) does not exist.
   */
  async inspect(target: string, kind: 'folder' | 'file' | 'any' = 'any'): Promise<Stats | undefined> {
    const parts = this.segments(target);
    let current = this.root;
    // the root may be a link (the user names it): followed
    let stat: Stats | undefined = await this.lstat(current, true);
    for (const [i, part] of parts.entries()) {
      current = path.join(current, part);
      stat = await this.lstat(current);
      if (!stat) return undefined;
      if (stat.isSymbolicLink()) throw await this.linkRefused(current);
      const last = i === parts.length - 1;
      if (!last && !stat.isDirectory()) throw this.wrongKind(current, 'folder', stat);
    }
    if (stat && kind === 'folder' && !stat.isDirectory()) throw this.wrongKind(target, 'folder', stat);
    if (stat && kind === 'file' && !stat.isFile()) throw this.wrongKind(target, 'file', stat);
    return stat;
  }

  /** Creates `target` and the folders leading to it, one at a time, refusing a link at any of them. */
  async mkdir(target: string): Promise<void> {
    let current = this.root;
    // the root is the user's: created with the folders leading to it, as any path they name
    await mkdir(this.root, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw this.failure(error, this.root, 'create the folder');
    });
    const root = await this.lstat(this.root, true);
    if (root && !root.isDirectory()) throw this.wrongKind(this.root, 'folder', root);
    for (const part of this.segments(target)) {
      current = path.join(current, part);
      let stat = await this.lstat(current);
      if (!stat) {
        try {
          await mkdir(current);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
            throw this.failure(error, current, 'create the folder');
        }
        stat = await this.lstat(current);
      }
      if (!stat)
        throw new DataFolderNotWritable(`Cannot create the folder ${current}: it disappeared while gex created it`);
      if (stat.isSymbolicLink()) throw await this.linkRefused(current);
      if (!stat.isDirectory()) throw this.wrongKind(current, 'folder', stat);
    }
  }

  /**
   * Removes `target` (a file or a whole folder) below the root. A link at it or on the way to it is
   * refused, not removed: it is someone else's. Inside a folder being removed, links are removed
   * as links (fs.rm never follows them).
   */
  async remove(target: string): Promise<void> {
    if (this.segments(target).length === 0) throw new Error(`Refusing to remove the data folder itself (${this.root})`);
    if (!(await this.inspect(target))) return;
    try {
      await rm(target, { recursive: true, force: true });
    } catch (error) {
      throw this.failure(error, target, 'remove');
    }
  }

  /**
   * Writes a whole file: into a new temporary file beside it (O_EXCL | O_NOFOLLOW), then renamed
   * over `target` — a reader sees the old file or the new one, and a link or a hard link planted
   * at the name is replaced rather than written through. A link at `target` is refused.
   */
  async writeFile(target: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
    await this.mkdir(path.dirname(target));
    await this.inspect(target, 'file');
    const temporary = path.join(path.dirname(target), `.gex-tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
    let handle: FileHandle | undefined;
    try {
      handle = await open(temporary, CREATE_NEW, mode);
      await handle.writeFile(data);
      await handle.close();
      handle = undefined;
      await rename(temporary, target);
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await unlink(temporary).catch(() => undefined);
      throw this.failure(error, target, 'write');
    }
  }

  /**
   * A new, empty file at `target` for streaming into: what was there (a file of an earlier run) is
   * removed first and the file is created with O_EXCL | O_NOFOLLOW, so nothing planted at the name
   * — a link or a hard link — is ever written through.
   */
  async createFile(target: string, mode = 0o644): Promise<FileHandle> {
    await this.mkdir(path.dirname(target));
    if (await this.inspect(target, 'file')) {
      await unlink(target).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw this.failure(error, target, 'replace');
      });
    }
    try {
      return await open(target, CREATE_NEW, mode);
    } catch (error) {
      throw this.failure(error, target, 'create');
    }
  }

  /**
   * Proves that `folder` takes new files: creates and removes a probe file in it — or, when it does
   * not exist yet, in the nearest folder above it that does (where it will be created). `proven`:
   * folders already proven by this check, skipped.
   */
  async proveWritable(folder: string, proven = new Set<string>()): Promise<void> {
    let existing = folder;
    while (!(await this.inspect(existing, 'folder')) && existing !== this.root) existing = path.dirname(existing);
    if (proven.has(existing)) return;
    proven.add(existing);
    const probe = path.join(existing, `.gex-probe-${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      await (await open(probe, CREATE_NEW, 0o600)).close();
      await unlink(probe);
    } catch (error) {
      await unlink(probe).catch(() => undefined);
      throw this.failure(error, existing, 'write in the folder');
    }
  }

  /** An error of the file system at `target` as the user should read it (see dataFolderFailure). */
  failure(error: unknown, target: string, action: string): unknown {
    return dataFolderFailure(error, target, action);
  }

  /** The components of `target` below the root; refuses a target outside it. */
  private segments(target: string): string[] {
    const relative = path.relative(this.root, path.resolve(target));
    if (relative === '') return [];
    if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
      throw new Error(`Refusing ${target}: it is not inside the data folder ${this.root}`);
    }
    return relative.split(path.sep);
  }

  private async lstat(file: string, follow = false): Promise<Stats | undefined> {
    try {
      return await (follow ? stat(file) : lstat(file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw this.failure(error, file, 'look at');
    }
  }

  private async linkRefused(file: string): Promise<UnsafeDataPath> {
    const to = await readlink(file).catch(() => '?');
    return new UnsafeDataPath(
      `Refusing to use ${file}: it is a symbolic link (to ${displayText(to)}) inside the data folder ${this.root}. ${LINK_ADVICE}`,
    );
  }

  private wrongKind(file: string, needed: 'folder' | 'file', stat: Stats): UnsafeDataPath {
    const found = stat.isDirectory() ? 'a folder' : stat.isFile() ? 'a file' : 'neither a file nor a folder';
    return new UnsafeDataPath(
      `Cannot use ${file} in the data folder: gex needs a ${needed} there and it is ${found}. Move it away, or point --data-dir at another folder.`,
    );
  }
}

/**
 * An error of the file system at `target` (in a data folder) as the user should read it: a folder
 * that cannot be written, a full or read-only disk, a link that appeared meanwhile — each a
 * UserError naming the path and the OS reason. Other errors are returned as they are.
 */
export function dataFolderFailure(error: unknown, target: string, action: string): unknown {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (error instanceof UserError) return error;
  if (code === 'ELOOP')
    return new UnsafeDataPath(
      `Refusing to ${action} ${target}: a symbolic link appeared there while gex used it. ${LINK_ADVICE}`,
    );
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    // a file where the path needs a folder (the data folder named below a file, a file named rows…)
    const file = fileInTheWay(target);
    if (file)
      return new UnsafeDataPath(
        `Cannot ${action} ${target}: ${file} is ${describeEntry(file)}, not a folder. Move it away, or point --data-dir at another folder.`,
      );
  }
  if (code === 'ENAMETOOLONG')
    return new DataFolderNotWritable(
      `Cannot ${action} ${target}: the path or a name in it is too long for the file system. Point --data-dir at a shorter path.`,
      { cause: error },
    );
  const reason = WRITE_FAILURES[code];
  if (!reason) return error;
  return new DataFolderNotWritable(`Cannot ${action} ${target} (${reason}, ${code}). ${writeAdvice(code)}`, {
    cause: error,
  });
}

/** `a file`, `a symbolic link`…: what is at `file`, for a message. */
function describeEntry(file: string): string {
  try {
    const stat = lstatSync(file);
    return stat.isSymbolicLink() ? 'a symbolic link' : stat.isFile() ? 'a file' : 'neither a file nor a folder';
  } catch {
    return 'an entry';
  }
}

const LINK_ADVICE =
  'gex creates, writes and removes nothing through a link in the data folder, so that a link planted there cannot send its files elsewhere. ' +
  'Remove the link (to keep the data on another disk, point --data-dir at a folder there).';

function writeAdvice(code: string): string {
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return 'Free some space, or point --data-dir at a folder on another disk.';
  if (code === 'EROFS') return 'Point --data-dir at a folder on a writable disk.';
  const uid = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
  return `Make it writable for the user gex runs as${uid}, or point --data-dir at another folder.`;
}
