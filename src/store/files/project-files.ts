import { randomInt } from 'node:crypto';
import type { Readable } from 'node:stream';
import { excerptId } from '../../common/log-text.js';
import type { Database } from '../sql/database.js';
import { StoreError } from '../store-error.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';
import { CHUNK_BYTES, DatabaseChunks, POOL_FOR_READS_IN_TRANSACTIONS, type FileBytes } from './file-bytes.js';

export { CHUNK_BYTES, POOL_FOR_READS_IN_TRANSACTIONS };

/**
 * A project's File Storage (docs/storage-api.md#files): each file's metadata is a row of
 * `storage_files`, its bytes rows of `storage_file_chunks` (about 1 MiB each) in the store's own
 * database, so every server process on a PostgreSQL store sees every file — or, with an object
 * store (FileBytes), one object per file in a bucket; the row is the same either way. An upload
 * writes chunk after chunk (short statements: other requests go on meanwhile; on SQLite on a worker thread)
 * while the file is `uploading`, holding at most two chunks in memory (uploadMemory); only the
 * last step, one statement, makes it `uploaded` and readable — a truncated upload or a killed
 * server leaves a file that was never uploaded, never a partial one. A file's name is metadata
 * only: nothing ever becomes a path.
 */

export type FileState = 'prepared' | 'uploading' | 'uploaded';

export interface StoredFile {
  readonly id: number;
  readonly name: string;
  readonly created: string;
  /** when the file is deleted; null: permanent */
  readonly expires: string | null;
  readonly isEncrypted: boolean;
  readonly tags: readonly string[];
  readonly state: FileState;
  /** null until uploaded */
  readonly sizeBytes: number | null;
  readonly creatorToken: { readonly id: number; readonly description: string };
}

export interface PrepareFile {
  name: string;
  isPermanent?: boolean;
  isEncrypted?: boolean;
  tags?: readonly string[];
  token: { id: number; description: string };
}

/** A file not made permanent is deleted this long after it was prepared (Keboola's 15 days). */
export const FILE_MAX_AGE_DAYS = 15;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Largest file accepted by default: 5 GiB. */
export const DEFAULT_FILE_LIMIT = 5 * 1024 ** 3;
/** Longest file name and tag, most tags: metadata stays small whatever a client sends. */
export const MAX_FILE_NAME = 1000;
export const MAX_TAG = 1000;
export const MAX_TAGS = 100;
/** Most files one list answers (Keboola's limit). */
export const MAX_LIST_LIMIT = 1000;
/** Files read from the database at a time by a list. */
const LIST_PAGE = 500;

const COLUMNS = 'id, name, created, expires, is_encrypted, tags, state, size_bytes, token_id, token_description';

function fileOf(row: Record<string, unknown>): StoredFile {
  return {
    id: Number(row.id),
    name: String(row.name),
    created: String(row.created),
    expires: row.expires === null ? null : String(row.expires),
    isEncrypted: Number(row.is_encrypted) === 1,
    tags: JSON.parse(String(row.tags)) as string[],
    state: String(row.state) as FileState,
    sizeBytes: row.size_bytes === null ? null : Number(row.size_bytes),
    creatorToken: { id: Number(row.token_id), description: String(row.token_description) },
  };
}

export function fileNotFound(id: number | string): StoreError {
  return StoreError.keboola(
    KEBOOLA_ERRORS.filesNotFound,
    `File ${excerptId(String(id))} not found in this project (files expire ${FILE_MAX_AGE_DAYS} days after they are prepared unless permanent).`,
    undefined,
    'GEX_FILE_NOT_FOUND',
  );
}

/**
 * The most bytes of a file one upload holds in memory at once in the database: the chunk being
 * filled and the one being written, never more than the `declaredBytes` it announced (its Content-Length).
 */
export function uploadMemory(declaredBytes?: number): number {
  return Math.min(declaredBytes ?? Infinity, 2 * CHUNK_BYTES);
}

export function fileTooLarge(limit: number): StoreError {
  return StoreError.keboola(
    KEBOOLA_ERRORS.filesTooLarge,
    `The file is larger than this server's limit of ${limit} bytes (gex serve --max-file-size); split it into smaller files.`,
    undefined,
    'GEX_FILE_TOO_LARGE',
  );
}

export class ProjectFiles {
  constructor(
    private readonly db: Database,
    private readonly projectId: number,
    private readonly now: () => Date = () => new Date(),
    /** where the bytes are: chunk rows of `db` unless an object store is given */
    private readonly bytes: FileBytes = new DatabaseChunks(db),
  ) {}

  /** The most bytes one upload of `declaredBytes` (its Content-Length) holds in memory. */
  uploadMemory(declaredBytes?: number): number {
    return this.bytes.uploadMemory(declaredBytes);
  }

  /** A new file, not yet uploaded; expired files of the project go first. */
  async prepare(input: PrepareFile): Promise<StoredFile> {
    await this.purgeExpired();
    const created = this.now();
    const file: StoredFile = {
      id: randomInt(1, 2 ** 47),
      name: input.name,
      created: created.toISOString(),
      expires: input.isPermanent ? null : new Date(created.getTime() + FILE_MAX_AGE_DAYS * DAY_MS).toISOString(),
      isEncrypted: input.isEncrypted ?? false,
      tags: [...(input.tags ?? [])],
      state: 'prepared',
      sizeBytes: null,
      creatorToken: { id: input.token.id, description: input.token.description },
    };
    await this.db.run(`INSERT INTO storage_files (project_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
      this.projectId,
      file.id,
      file.name,
      file.created,
      file.expires,
      file.isEncrypted ? 1 : 0,
      JSON.stringify(file.tags),
      file.state,
      null,
      file.creatorToken.id,
      file.creatorToken.description,
    ]);
    return file;
  }

  /** The project's file that has not expired (uploaded or not); another project's is not found. */
  async get(id: number): Promise<StoredFile> {
    const row = await this.db.get(
      `SELECT ${COLUMNS} FROM storage_files WHERE project_id = ? AND id = ? AND (expires IS NULL OR expires > ?)`,
      [this.projectId, id, this.now().toISOString()],
    );
    if (!row) throw fileNotFound(id);
    return fileOf(row);
  }

  /** An uploaded file (what imports read and downloads send); one not uploaded is refused naming it. */
  async uploaded(id: number): Promise<StoredFile> {
    const file = await this.get(id);
    if (file.state !== 'uploaded')
      throw StoreError.keboola(
        KEBOOLA_ERRORS.filesNotUploaded,
        `File ${file.id} (${excerptId(file.name)}) has not been uploaded (or its upload did not finish); upload it first.`,
      );
    return file;
  }

  /**
   * Newest first; with tags, only files that have every one of them. Read from the database a page
   * at a time, so a project with many files never has them all in memory.
   */
  async list(options: { limit: number; offset: number; tags?: readonly string[] }): Promise<StoredFile[]> {
    await this.purgeExpired();
    const tags = options.tags ?? [];
    const found: StoredFile[] = [];
    let skip = options.offset;
    for (let page = 0; found.length < options.limit; page++) {
      const rows = await this.db.all(
        `SELECT ${COLUMNS} FROM storage_files WHERE project_id = ? ORDER BY created DESC, id DESC LIMIT ? OFFSET ?`,
        [this.projectId, LIST_PAGE, tags.length === 0 ? options.offset + page * LIST_PAGE : page * LIST_PAGE],
      );
      for (const file of rows.map(fileOf)) {
        if (!tags.every((t) => file.tags.includes(t))) continue;
        if (tags.length > 0 && skip > 0) {
          skip--;
          continue;
        }
        if (found.length < options.limit) found.push(file);
      }
      if (rows.length < LIST_PAGE) break;
    }
    return found;
  }

  /**
   * The row goes first, then the bytes. The file is deleted once its row is: an object a refusing
   * or unreachable bucket kept is never named again, and the bucket's sweep (object-sweep.ts)
   * removes it later.
   */
  async delete(id: number): Promise<void> {
    await this.get(id);
    await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM storage_files WHERE project_id = ? AND id = ?', [this.projectId, id]);
      await this.bytes.dropInTransaction(tx, [id]);
    });
    await this.bytes.dropDeleted([{ projectId: this.projectId, id }]).catch(() => undefined);
  }

  /**
   * Writes the file's bytes from `body`, chunk by chunk, and marks it uploaded at the end; more
   * than `limit` bytes is refused (413) as soon as it is exceeded. With `declaredBytes` (the
   * request's Content-Length) the upload holds no more than uploadMemory(declaredBytes), and a
   * body longer than that is refused. A file can be uploaded once; a failed upload (a body that
   * broke off, the limit) drops what was written and leaves the file prepared, so the client can
   * try again.
   */
  async upload(
    id: number,
    body: AsyncIterable<Buffer | string>,
    limit: number,
    declaredBytes?: number,
  ): Promise<StoredFile> {
    // chunks a failed cleanup left behind go in the same commit
    const claimed = await this.db.transaction(async (tx) => {
      const changed = await tx.run(
        `UPDATE storage_files SET state = 'uploading' WHERE project_id = ? AND id = ? AND state = 'prepared' AND (expires IS NULL OR expires > ?)`,
        [this.projectId, id, this.now().toISOString()],
      );
      if (changed.changes > 0) await this.bytes.dropInTransaction(tx, [id]);
      return changed;
    });
    if (claimed.changes === 0) {
      const file = await this.get(id);
      throw StoreError.keboola(
        KEBOOLA_ERRORS.filesAlreadyUploaded,
        `File ${file.id} (${excerptId(file.name)}) has ${file.state === 'uploaded' ? 'already been uploaded' : 'an upload in progress'}; a file is uploaded once: prepare a new one.`,
      );
    }
    try {
      const size = await this.bytes.write(this.projectId, id, bounded(body, limit, declaredBytes), declaredBytes);
      const done = await this.db.run(
        `UPDATE storage_files SET state = 'uploaded', size_bytes = ? WHERE project_id = ? AND id = ? AND state = 'uploading'`,
        [size, this.projectId, id],
      );
      // deleted while it was uploaded: its bytes go too (below)
      if (done.changes === 0) throw fileNotFound(id);
    } catch (error) {
      // objects first, while the file is still `uploading`: a retry claiming it afterwards cannot lose its own
      await this.bytes.dropDeleted([{ projectId: this.projectId, id }]).catch(() => undefined);
      await this.db
        .transaction(async (tx) => {
          await this.bytes.dropInTransaction(tx, [id]);
          await tx.run(`UPDATE storage_files SET state = 'prepared' WHERE project_id = ? AND id = ?`, [
            this.projectId,
            id,
          ]);
        })
        .catch(() => undefined);
      throw error;
    }
    return this.get(id);
  }

  /**
   * The bytes of an uploaded file, read as the consumer pulls them (one chunk or one network read
   * in memory at a time). A file deleted while it is read ends the stream with its not-found error.
   */
  content(file: StoredFile): Readable {
    return this.bytes.read(this.projectId, file.id, file.sizeBytes ?? 0, () => fileNotFound(file.id));
  }

  /** `content`, once its bytes are known to be there: a download answers 200 only then. */
  open(file: StoredFile): Promise<Readable> {
    return this.bytes.open(this.projectId, file.id, file.sizeBytes ?? 0, () => fileNotFound(file.id));
  }

  /**
   * Whether `content` can be read while a transaction of the same store is open: on PostgreSQL the
   * chunks are read on another pooled connection, if the pool has one for every running job's reads
   * besides its load's; SQLite's one connection would make the read wait for the transaction that
   * waits for it. Objects are always readable.
   */
  get readableInTransactions(): boolean {
    return this.bytes.readableInTransactions(this.db);
  }

  /** Deletes the project's files past their expiry with their chunks. */
  async purgeExpired(): Promise<number> {
    return purgeExpiredFiles(this.db, this.now(), this.projectId, this.bytes);
  }
}

/** Deletes expired files (of one project, or of all) with their bytes, rows first; returns how many. */
export async function purgeExpiredFiles(
  db: Database,
  now: Date,
  projectId?: number,
  bytes: FileBytes = new DatabaseChunks(db),
): Promise<number> {
  const expired = await db.transaction(async (tx) => {
    const params = projectId === undefined ? [now.toISOString()] : [now.toISOString(), projectId];
    const where = `expires IS NOT NULL AND expires <= ?${projectId === undefined ? '' : ' AND project_id = ?'}`;
    const rows = await tx.all<{ id: unknown; project_id: unknown }>(
      `SELECT id, project_id FROM storage_files WHERE ${where}`,
      params,
    );
    await bytes.dropInTransaction(
      tx,
      rows.map((r) => Number(r.id)),
    );
    await tx.run(`DELETE FROM storage_files WHERE ${where}`, params);
    return rows.map((r) => ({ id: Number(r.id), projectId: Number(r.project_id) }));
  });
  // the files are gone with their rows; objects a refusing bucket kept go with its next sweep
  await bytes.dropDeleted(expired).catch(() => undefined);
  return expired.length;
}

function longerThanDeclared(declared: number): StoreError {
  return StoreError.keboola(
    KEBOOLA_ERRORS.filesValidation,
    `The upload sent more than the ${declared} bytes its Content-Length announced; send the file with its exact length.`,
  );
}

/** `body` as Buffers, refused (413) once past `limit` or (400) past the `declared` length, before the piece is passed on. */
async function* bounded(
  body: AsyncIterable<Buffer | string>,
  limit: number,
  declared: number | undefined,
): AsyncGenerator<Buffer> {
  let size = 0;
  for await (const piece of body) {
    const buffer = typeof piece === 'string' ? Buffer.from(piece) : piece;
    size += buffer.length;
    if (size > limit) throw fileTooLarge(limit);
    if (declared !== undefined && size > declared) throw longerThanDeclared(declared);
    yield buffer;
  }
}
