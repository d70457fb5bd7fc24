import { randomInt } from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { excerptId } from '../../common/log-text.js';
import type { Database } from '../sql/database.js';
import { StoreError } from '../store-error.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * A project's File Storage (docs/storage-api.md#files): each file's metadata is a row of
 * `storage_files`, its bytes rows of `storage_file_chunks` (about 1 MiB each) in the store's own
 * database, so every server process on a PostgreSQL store sees every file. An upload writes chunk
 * after chunk (short statements: other requests go on meanwhile; on SQLite on a worker thread)
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

/** Bytes of one stored chunk: a file is read and written this much at a time. */
export const CHUNK_BYTES = 1024 * 1024;
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
/**
 * Connections a pool needs for imports to read a file's chunks beside their load's transaction: a
 * server runs two storage jobs at once, each holding one connection for its load and one for reads.
 */
export const POOL_FOR_READS_IN_TRANSACTIONS = 4;
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
 * The most bytes of a file one upload holds in memory at once: the chunk being filled and the one
 * being written, never more than the `declaredBytes` it announced (its Content-Length).
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
  ) {}

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

  async delete(id: number): Promise<void> {
    await this.get(id);
    await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM storage_files WHERE project_id = ? AND id = ?', [this.projectId, id]);
      await tx.run('DELETE FROM storage_file_chunks WHERE file_id = ?', [id]);
    });
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
      if (changed.changes > 0) await tx.run('DELETE FROM storage_file_chunks WHERE file_id = ?', [id]);
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
      const size = await writeChunks(this.db, id, body, limit, declaredBytes);
      const done = await this.db.run(
        `UPDATE storage_files SET state = 'uploaded', size_bytes = ? WHERE project_id = ? AND id = ? AND state = 'uploading'`,
        [size, this.projectId, id],
      );
      // deleted while it was uploaded: its chunks go too (below)
      if (done.changes === 0) throw fileNotFound(id);
    } catch (error) {
      await this.db
        .transaction(async (tx) => {
          await tx.run('DELETE FROM storage_file_chunks WHERE file_id = ?', [id]);
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
   * The bytes of an uploaded file, read chunk by chunk as the consumer pulls them (one chunk in
   * memory at a time). A file deleted while it is read ends the stream with its not-found error.
   */
  content(file: StoredFile): Readable {
    const { db } = this;
    const size = file.sizeBytes ?? 0;
    const sql = 'SELECT bytes FROM storage_file_chunks WHERE file_id = ? AND seq = ?';
    const fetch = (seq: number) => {
      const row = db.get<{ bytes: Buffer }>(sql, [file.id, seq]).then((r) => r?.bytes);
      row.catch(() => undefined); // awaited below; a reader gone early leaves it unread
      return row;
    };
    async function* chunks(): AsyncGenerator<Buffer> {
      let read = 0;
      // the next chunk is read from the database while this one is sent
      let next = fetch(0);
      for (let seq = 0; read < size; seq++) {
        const bytes = await next;
        if (!bytes) throw fileNotFound(file.id); // deleted (or expired and purged) while it was read
        read += bytes.length;
        if (read < size) next = fetch(seq + 1);
        // a chunk read ahead is ready at once: without this the consumer (a load) would run chunk
        // after chunk in microtasks and starve the server's other requests until it ends
        await setImmediate();
        yield bytes;
      }
    }
    return Readable.from(chunks(), { objectMode: false, highWaterMark: CHUNK_BYTES });
  }

  /**
   * Whether `content` can be read while a transaction of the same store is open: on PostgreSQL the
   * chunks are read on another pooled connection, if the pool has one for every running job's reads
   * besides its load's; SQLite's one connection would make the read wait for the transaction that
   * waits for it.
   */
  get readableInTransactions(): boolean {
    return (this.db.poolSize ?? 0) >= POOL_FOR_READS_IN_TRANSACTIONS;
  }

  /** Deletes the project's files past their expiry with their chunks. */
  async purgeExpired(): Promise<number> {
    return purgeExpiredFiles(this.db, this.now(), this.projectId);
  }
}

/** Deletes expired files (of one project, or of all) with their chunks; returns how many. */
export async function purgeExpiredFiles(db: Database, now: Date, projectId?: number): Promise<number> {
  return db.transaction(async (tx) => {
    const params = projectId === undefined ? [now.toISOString()] : [now.toISOString(), projectId];
    const where = `expires IS NOT NULL AND expires <= ?${projectId === undefined ? '' : ' AND project_id = ?'}`;
    const expired = await tx.all<{ id: unknown }>(`SELECT id FROM storage_files WHERE ${where}`, params);
    for (const { id } of expired) await tx.run('DELETE FROM storage_file_chunks WHERE file_id = ?', [Number(id)]);
    await tx.run(`DELETE FROM storage_files WHERE ${where}`, params);
    return expired.length;
  });
}

function longerThanDeclared(declared: number): StoreError {
  return StoreError.keboola(
    KEBOOLA_ERRORS.filesValidation,
    `The upload sent more than the ${declared} bytes its Content-Length announced; send the file with its exact length.`,
  );
}

/**
 * Stores `body` as chunks 0, 1, … of file `id` (CHUNK_BYTES each, the last one shorter); returns
 * its size. The pieces are copied as they arrive into one of the upload's two buffers while the
 * other one is written, then the two swap: the upload holds nothing else (uploadMemory) and
 * allocates no more than them.
 */
async function writeChunks(
  db: Database,
  id: number,
  body: AsyncIterable<Buffer | string>,
  limit: number,
  declared?: number,
): Promise<number> {
  let size = 0;
  let seq = 0;
  /** bytes handed to inserts so far */
  let stored = 0;
  const buffers: Array<Buffer | undefined> = [undefined, undefined];
  let turn = 0;
  /** the buffer being filled, `room` bytes of it for this chunk, `filled` so far */
  let chunk: Buffer | undefined;
  let room = 0;
  let filled = 0;
  // one insert in flight while the next chunk arrives
  let writing: Promise<unknown> = Promise.resolve();
  const flush = async (): Promise<void> => {
    if (chunk === undefined || filled === 0) return;
    const bytes = chunk.subarray(0, filled);
    chunk = undefined;
    stored += filled;
    filled = 0;
    // the write of the other buffer ends here: it is free to be filled next
    await writing;
    writing = db.runLarge('INSERT INTO storage_file_chunks (file_id, seq, bytes) VALUES (?, ?, ?)', [id, seq++, bytes]);
    writing.catch(() => undefined); // awaited by the next flush or at the end
  };
  try {
    for await (const piece of body) {
      let buffer = typeof piece === 'string' ? Buffer.from(piece) : piece;
      size += buffer.length;
      if (size > limit) throw fileTooLarge(limit);
      if (declared !== undefined && size > declared) throw longerThanDeclared(declared);
      while (buffer.length > 0) {
        if (chunk === undefined) {
          // a declared size makes the last chunk exactly as long as what is left; a buffer is
          // made at its first use for what is left then, and later chunks never need more
          room = Math.min(CHUNK_BYTES, (declared ?? Infinity) - stored);
          chunk = buffers[turn] ??= Buffer.allocUnsafe(room);
          turn = 1 - turn;
        }
        const copied = buffer.copy(chunk, filled, 0, Math.min(buffer.length, room - filled));
        filled += copied;
        buffer = buffer.subarray(copied);
        if (filled === room) await flush();
      }
    }
    await flush();
    await writing;
  } catch (error) {
    // the caller drops the chunks written: none may land after that
    await writing.catch(() => undefined);
    throw error;
  }
  return size;
}
