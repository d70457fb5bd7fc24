import { randomInt } from 'node:crypto';
import { UserError } from '../../common/errors.js';
import { maskUrlSignatures } from '../../common/url-signature.js';
import type { Readable } from 'node:stream';
import { excerptId } from '../../common/log-text.js';
import type { Database } from '../sql/database.js';
import { StoreError } from '../store-error.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';
import { CHUNK_BYTES, DatabaseChunks, POOL_FOR_READS_IN_TRANSACTIONS, type FileBytes } from './file-bytes.js';
import type { CompletedPart } from './object-store.js';

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
  /** the size a direct upload to the object store was prepared for; null: uploaded through the server */
  readonly declaredSize: number | null;
  /** the id of the file's multipart upload to the object store while it is prepared; null: none */
  readonly uploadId: string | null;
}

export interface PrepareFile {
  name: string;
  isPermanent?: boolean;
  isEncrypted?: boolean;
  tags?: readonly string[];
  token: { id: number; description: string };
  /**
   * The size the client will upload (Keboola's `sizeBytes`): with an object store, the file is
   * prepared for an upload straight to the bucket (directUpload); without one it is not used.
   */
  sizeBytes?: number;
}

/** Where a client uploads a file prepared with its size straight to the bucket, until `expiresAt`. */
export type DirectUpload =
  | { readonly method: 'PUT'; readonly url: string; readonly expiresAt: string }
  | {
      readonly method: 'MULTIPART';
      readonly partSize: number;
      readonly parts: ReadonlyArray<{ readonly partNumber: number; readonly url: string }>;
      readonly expiresAt: string;
    };

/** Largest file uploaded straight to the bucket in one PUT; a larger one goes in parts (a multipart upload). */
export const DIRECT_PUT_MAX = 32 * 1024 * 1024;
/** Smallest part of a direct multipart upload (S3's minimum is 5 MiB). */
export const MIN_DIRECT_PART = 16 * 1024 * 1024;
/** Most parts of a direct multipart upload: the parts grow with the file beyond this. */
export const MAX_DIRECT_PARTS = 1000;
/**
 * How long the pre-signed addresses of an upload and of a download (GET) live. A single PUT's is
 * short: it could overwrite the object with other bytes of the same length until it expires, also
 * after the file was completed (a multipart upload's parts cannot: completing it ends them).
 */
export const PUT_URL_SECONDS = 15 * 60;
export const UPLOAD_URL_SECONDS = 60 * 60;
export const DOWNLOAD_URL_SECONDS = 60 * 60;

/** The size of each part of a direct multipart upload of `size` bytes (the last one shorter). */
export function directPartSize(size: number): number {
  return Math.max(MIN_DIRECT_PART, Math.ceil(size / MAX_DIRECT_PARTS));
}

/** How many parts a direct multipart upload of `size` bytes has. */
export function directPartCount(size: number): number {
  return Math.max(1, Math.ceil(size / directPartSize(size)));
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

const COLUMNS =
  'id, name, created, expires, is_encrypted, tags, state, size_bytes, token_id, token_description, declared_size, upload_id';

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
    declaredSize: row.declared_size === null || row.declared_size === undefined ? null : Number(row.declared_size),
    uploadId: row.upload_id === null || row.upload_id === undefined ? null : String(row.upload_id),
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

  /** Whether files' bytes can go to and come from the bucket directly (an object store). */
  get direct(): boolean {
    return this.bytes.direct !== undefined;
  }

  /**
   * A new file, not yet uploaded; expired files of the project go first. With `sizeBytes` and an
   * object store, it is prepared for a direct upload of exactly that size: one larger than
   * DIRECT_PUT_MAX has its multipart upload started now.
   */
  async prepare(input: PrepareFile): Promise<StoredFile> {
    await this.purgeExpired();
    const created = this.now();
    const id = randomInt(1, 2 ** 47);
    const direct = this.bytes.direct;
    const declaredSize = direct && input.sizeBytes !== undefined ? input.sizeBytes : null;
    if (declaredSize !== null && (!Number.isSafeInteger(declaredSize) || declaredSize < 0))
      throw new RangeError(`A file's size is a whole number of bytes, got ${declaredSize}`);
    const uploadId =
      direct && declaredSize !== null && declaredSize > DIRECT_PUT_MAX
        ? await direct.startMultipart(this.projectId, id)
        : null;
    const file: StoredFile = {
      id,
      name: input.name,
      created: created.toISOString(),
      expires: input.isPermanent ? null : new Date(created.getTime() + FILE_MAX_AGE_DAYS * DAY_MS).toISOString(),
      isEncrypted: input.isEncrypted ?? false,
      tags: [...(input.tags ?? [])],
      state: 'prepared',
      sizeBytes: null,
      creatorToken: { id: input.token.id, description: input.token.description },
      declaredSize,
      uploadId,
    };
    try {
      await this.db.run(
        `INSERT INTO storage_files (project_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
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
          file.declaredSize,
          file.uploadId,
        ],
      );
    } catch (error) {
      if (direct && uploadId !== null) await direct.abortMultipart(this.projectId, id, uploadId).catch(() => undefined);
      throw error;
    }
    return file;
  }

  /**
   * Where the client uploads a file prepared for a direct upload (with its size, in an object
   * store): a PUT signed for exactly its size, or its multipart upload's parts, each address living
   * UPLOAD_URL_SECONDS. Undefined for any other file: it is uploaded through the server.
   */
  async directUpload(file: StoredFile): Promise<DirectUpload | undefined> {
    const direct = this.bytes.direct;
    if (!direct || file.state !== 'prepared' || file.declaredSize === null) return undefined;
    const expiresIn = (seconds: number) => new Date(this.now().getTime() + seconds * 1000).toISOString();
    if (file.uploadId === null) {
      const url = await direct.presignPut(this.projectId, file.id, file.declaredSize, PUT_URL_SECONDS);
      return { method: 'PUT', url, expiresAt: expiresIn(PUT_URL_SECONDS) };
    }
    const expiresAt = expiresIn(UPLOAD_URL_SECONDS);
    const { uploadId } = file;
    const count = directPartCount(file.declaredSize);
    const parts = await Promise.all(
      Array.from({ length: count }, async (_, i) => ({
        partNumber: i + 1,
        url: await direct.presignPart(this.projectId, file.id, uploadId, i + 1, UPLOAD_URL_SECONDS),
      })),
    );
    return { method: 'MULTIPART', partSize: directPartSize(file.declaredSize), parts, expiresAt };
  }

  /**
   * A pre-signed GET of an uploaded file's object (living DOWNLOAD_URL_SECONDS): with an object
   * store, where a client downloads it from the bucket itself. Undefined otherwise.
   */
  async downloadUrl(file: StoredFile): Promise<string | undefined> {
    const direct = this.bytes.direct;
    if (!direct || file.state !== 'uploaded') return undefined;
    return direct.presignGet(this.projectId, file.id, DOWNLOAD_URL_SECONDS);
  }

  /**
   * Ends a direct upload (docs/storage-api.md#files): completes the file's multipart upload with
   * `parts` (the ETags the bucket answered each part's PUT), then marks the file uploaded if its
   * object has exactly the size it was prepared with. An object of another size is dropped and the
   * file stays prepared. An uploaded file is answered as it is, so a repeated call is harmless; two
   * at once mark it once (a conditional UPDATE).
   */
  async complete(id: number, parts?: readonly CompletedPart[]): Promise<StoredFile> {
    const file = await this.get(id);
    if (file.state === 'uploaded') return file;
    const direct = this.bytes.direct;
    const label = `File ${file.id} (${excerptId(file.name)})`;
    if (!direct || file.declaredSize === null)
      throw StoreError.keboola(
        KEBOOLA_ERRORS.filesValidation,
        `${label} was not prepared for a direct upload (POST files/prepare with sizeBytes, on a server with --file-storage); ` +
          'PUT its bytes to the uploadParams.url it was prepared with: that upload completes it.',
      );
    if (file.state === 'uploading') throw this.uploadInProgress(file);
    const declared = file.declaredSize;
    if (file.uploadId !== null) {
      const count = directPartCount(declared);
      if (!parts || parts.length === 0)
        throw completeInvalid(
          'parts',
          `${label} is uploaded in ${count} parts: send parts, [{partNumber, etag}] with the ETag the bucket answered each part's PUT.`,
        );
      if (parts.length > count || parts.some((p) => p.partNumber > count))
        throw completeInvalid(
          'parts',
          `${label} was prepared for ${count} parts (numbers 1 to ${count}), got ${parts.length} up to number ${Math.max(...parts.map((p) => p.partNumber))}.`,
        );
      try {
        await direct.completeMultipart(this.projectId, file.id, file.uploadId, parts);
      } catch (error) {
        // another complete may have finished it meanwhile
        const now = await this.get(id);
        if (now.state === 'uploaded') return now;
        // completed in the bucket before (a complete that died before it marked the file): the object tells
        const completed =
          error instanceof UserError &&
          error.gexCode === 'GEX_OBJECT_STORE_REFUSED' &&
          (await direct.size(this.projectId, file.id)) === declared;
        if (error instanceof UserError && error.gexCode === 'GEX_OBJECT_STORE_REFUSED' && !completed)
          throw completeInvalid(
            'parts',
            `The bucket refused completing the upload of ${label}: ${maskUrlSignatures(error.message)} ` +
              'Check that every part was PUT and that each etag is the ETag header its PUT answered; or prepare the file again.',
          );
        if (!completed) throw error;
      }
    } else if (parts && parts.length > 0) {
      throw completeInvalid('parts', `${label} was prepared for one PUT, not a multipart upload: send no parts.`);
    }
    const size = await direct.size(this.projectId, file.id);
    if (size === declared) {
      const marked = await this.markUploaded(file.id, declared);
      if (!marked) {
        const now = await this.get(id);
        if (now.state !== 'uploaded') throw this.uploadInProgress(now);
        return now;
      }
      return this.get(id);
    }
    if (size === undefined)
      throw StoreError.keboola(
        KEBOOLA_ERRORS.filesNotUploaded,
        `${label} has no bytes in ${this.bytes.location} yet: PUT its ${declared} bytes to the uploadParams.url it was prepared with, then complete it.`,
      );
    // the object is not the file prepared: dropped, so that it is never read as one
    await this.dropMismatched(file);
    throw StoreError.keboola(
      KEBOOLA_ERRORS.filesValidation,
      `${label} was prepared with sizeBytes ${declared}, but its upload has ${size} bytes; it was dropped and the file stays prepared. ` +
        (file.uploadId === null
          ? `PUT exactly ${declared} bytes to its uploadParams.url again (or prepare the file again), then complete it.`
          : `Prepare the file again with its true sizeBytes and upload it (its multipart upload is spent).`),
      [{ key: 'sizeBytes', message: `prepared ${declared}, uploaded ${size}` }],
    );
  }

  private uploadInProgress(file: StoredFile): StoreError {
    return StoreError.keboola(
      KEBOOLA_ERRORS.filesAlreadyUploaded,
      `File ${file.id} (${excerptId(file.name)}) has an upload through the server in progress; wait for it, or prepare a new file.`,
    );
  }

  /** Marks a prepared file of `size` bytes uploaded, if it still is prepared for that size; whether it did. */
  private async markUploaded(id: number, size: number): Promise<boolean> {
    const done = await this.db.run(
      `UPDATE storage_files SET state = 'uploaded', size_bytes = ?, upload_id = NULL
       WHERE project_id = ? AND id = ? AND state = 'prepared' AND declared_size = ? AND (expires IS NULL OR expires > ?)`,
      [size, this.projectId, id, size, this.now().toISOString()],
    );
    return done.changes > 0;
  }

  /** A prepared file's object of the wrong size goes; its multipart upload, spent, is forgotten. */
  private async dropMismatched(file: StoredFile): Promise<void> {
    const still = await this.db.run(
      `UPDATE storage_files SET upload_id = NULL WHERE project_id = ? AND id = ? AND state = 'prepared'`,
      [this.projectId, file.id],
    );
    if (still.changes > 0) await this.bytes.dropDeleted([{ projectId: this.projectId, id: file.id }]);
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

  /**
   * An uploaded file (what imports read and downloads send); one not uploaded is refused naming it.
   * A file prepared for one direct PUT whose client never completed it (Keboola's own clients) is
   * completed here if its object has exactly the size it was prepared with.
   */
  async uploaded(id: number): Promise<StoredFile> {
    let file = await this.get(id);
    const direct = this.bytes.direct;
    if (direct && file.state === 'prepared' && file.declaredSize !== null && file.uploadId === null) {
      const size = await direct.size(this.projectId, file.id);
      if (size === file.declaredSize) {
        await this.markUploaded(file.id, size);
        file = await this.get(id);
      }
    }
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
    const file = await this.get(id);
    await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM storage_files WHERE project_id = ? AND id = ?', [this.projectId, id]);
      await this.bytes.dropInTransaction(tx, [id]);
    });
    await this.bytes.dropDeleted([{ projectId: this.projectId, id }]).catch(() => undefined);
    if (file.uploadId !== null) await this.abandonMultipart([{ id, uploadId: file.uploadId }]);
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
    // prepared for a direct upload (an object store only): what is sent here must be its size too
    const prepared = this.bytes.direct ? await this.get(id) : undefined;
    const declaredSize = prepared?.declaredSize ?? null;
    if (prepared && declaredSize !== null && declaredBytes !== undefined && declaredBytes !== declaredSize)
      throw notDeclaredSize(prepared, declaredBytes);
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
      // a chunked body is bounded by the size the file was prepared with, if any
      const tooLong =
        prepared && declaredBytes === undefined && declaredSize !== null
          ? () => notDeclaredSize(prepared, `more than ${declaredSize}`)
          : undefined;
      const expected = declaredBytes ?? declaredSize ?? undefined;
      const size = await this.bytes.write(this.projectId, id, bounded(body, limit, expected, tooLong), declaredBytes);
      if (prepared && declaredSize !== null && size !== declaredSize) throw notDeclaredSize(prepared, size);
      const done = await this.db.run(
        `UPDATE storage_files SET state = 'uploaded', size_bytes = ?${prepared ? ', upload_id = NULL' : ''} WHERE project_id = ? AND id = ? AND state = 'uploading'`,
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
    // a multipart upload prepared and not used: its parts go
    if (prepared?.uploadId) await this.abandonMultipart([{ id, uploadId: prepared.uploadId }]);
    return this.get(id);
  }

  /** Drops the parts of multipart uploads no file will complete (best effort: the bucket's lifecycle rules are the backstop). */
  private async abandonMultipart(uploads: ReadonlyArray<{ id: number; uploadId: string }>): Promise<void> {
    const direct = this.bytes.direct;
    if (!direct) return;
    for (const upload of uploads)
      await direct.abortMultipart(this.projectId, upload.id, upload.uploadId).catch(() => undefined);
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
    const rows = await tx.all<{ id: unknown; project_id: unknown; upload_id: unknown }>(
      `SELECT id, project_id, upload_id FROM storage_files WHERE ${where}`,
      params,
    );
    await bytes.dropInTransaction(
      tx,
      rows.map((r) => Number(r.id)),
    );
    await tx.run(`DELETE FROM storage_files WHERE ${where}`, params);
    return rows.map((r) => ({
      id: Number(r.id),
      projectId: Number(r.project_id),
      uploadId: r.upload_id === null || r.upload_id === undefined ? null : String(r.upload_id),
    }));
  });
  // the files are gone with their rows; objects a refusing bucket kept go with its next sweep
  await bytes.dropDeleted(expired.map((f) => ({ id: f.id, projectId: f.projectId }))).catch(() => undefined);
  // multipart uploads never completed: their parts go (best effort; else the sweep aborts them)
  for (const file of expired) {
    if (bytes.direct && file.uploadId !== null)
      await bytes.direct.abortMultipart(file.projectId, file.id, file.uploadId).catch(() => undefined);
  }
  return expired.length;
}

/** A refused upload-complete body: 400 naming the field. */
function completeInvalid(field: string, problem: string): StoreError {
  return StoreError.keboola(KEBOOLA_ERRORS.filesValidation, `Invalid parameters - ${field}: ${problem}`, [
    { key: field, message: problem },
  ]);
}

/** A body of another length than the sizeBytes the file was prepared with. */
function notDeclaredSize(file: StoredFile, sent: number | string): StoreError {
  return StoreError.keboola(
    KEBOOLA_ERRORS.filesValidation,
    `File ${file.id} (${excerptId(file.name)}) was prepared with sizeBytes ${file.declaredSize}, but the upload sends ${sent} bytes; ` +
      'send exactly that many, or prepare the file again with its true size.',
    [{ key: 'sizeBytes', message: `prepared ${file.declaredSize}, sent ${sent}` }],
  );
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
  tooLong: () => StoreError = () => longerThanDeclared(declared ?? 0),
): AsyncGenerator<Buffer> {
  let size = 0;
  for await (const piece of body) {
    const buffer = typeof piece === 'string' ? Buffer.from(piece) : piece;
    size += buffer.length;
    if (size > limit) throw fileTooLarge(limit);
    if (declared !== undefined && size > declared) throw tooLong();
    yield buffer;
  }
}
