import { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { UserError } from '../../common/errors.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';
import type { Database, SqlExecutor } from '../sql/database.js';
import { StoreError } from '../store-error.js';
import { fileKey, PART_BYTES, UPLOAD_QUEUE, type CompletedPart, type ObjectStore } from './object-store.js';

/**
 * Where File Storage keeps a file's bytes (its metadata is always a row of `storage_files`): one
 * interface, two backends — chunk rows in the store's database (DatabaseChunks, the default) or
 * objects in an S3-compatible bucket (ObjectStoreBytes, `--file-storage s3://…`). ProjectFiles
 * decides when bytes count (the file's state); a backend only writes, reads and drops them.
 */
export interface FileBytes {
  /** `s3://bucket/prefix/` or 'database', as shown in messages */
  readonly location: string;
  /** The most bytes one upload holds in memory while it is written. */
  uploadMemory(declaredBytes?: number): number;
  /**
   * Writes the file's bytes from `body` (already bounded by the caller); returns the size. A
   * failure may leave bytes behind: the caller drops them with `dropInTransaction`/`dropDeleted`.
   */
  write(projectId: number, fileId: number, body: AsyncIterable<Buffer>, size: number | undefined): Promise<number>;
  /** The bytes of an uploaded file of `size` bytes, read as the consumer pulls them; `gone`: the error when they vanished meanwhile. */
  read(projectId: number, fileId: number, size: number, gone: () => Error): Readable;
  /** `read`, once the bytes are known to be there (before a download answers 200); else `gone`'s error or why not. */
  open(projectId: number, fileId: number, size: number, gone: () => Error): Promise<Readable>;
  /** Whether `read` works while a transaction of the same store is open. */
  readableInTransactions(db: Database): boolean;
  /** Drops bytes inside the transaction that changes the files' rows (chunk rows). */
  dropInTransaction(tx: SqlExecutor, fileIds: readonly number[]): Promise<void>;
  /** Drops bytes once the files' rows are gone or reset (objects): never before, so no visible file names missing bytes. */
  dropDeleted(files: ReadonlyArray<{ projectId: number; id: number }>): Promise<void>;
  /** Uploads and downloads that go to the bucket itself by pre-signed addresses; undefined: only through the server. */
  readonly direct: DirectBytes | undefined;
}

/**
 * A file's object reached by its client itself (an object store only): pre-signed addresses to PUT
 * it whole or in parts and to GET it, and what the server does around them. Signing is local
 * computation; the other calls reach the bucket. Unreachable: a 503 with Retry-After.
 */
export interface DirectBytes {
  /** A PUT of the object, signed for exactly `size` bytes (a body of another length is refused by the bucket). */
  presignPut(projectId: number, fileId: number, size: number, expiresSeconds: number): Promise<string>;
  presignGet(projectId: number, fileId: number, expiresSeconds: number): Promise<string>;
  /** Starts a multipart upload of the object; its upload id. */
  startMultipart(projectId: number, fileId: number): Promise<string>;
  presignPart(
    projectId: number,
    fileId: number,
    uploadId: string,
    partNumber: number,
    expiresSeconds: number,
  ): Promise<string>;
  completeMultipart(
    projectId: number,
    fileId: number,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<void>;
  /** Drops a multipart upload's parts (one already gone is no error). */
  abortMultipart(projectId: number, fileId: number, uploadId: string): Promise<void>;
  /** The object's size; undefined when there is none. */
  size(projectId: number, fileId: number): Promise<number | undefined>;
}

/** The most one upload into an object store holds: the part being filled and those being sent. */
export const OBJECT_UPLOAD_MEMORY = (UPLOAD_QUEUE + 1) * PART_BYTES;

/** Bytes of one stored chunk: a file is read and written this much at a time. */
export const CHUNK_BYTES = 1024 * 1024;
/**
 * Connections a pool needs for imports to read a file's chunks beside their load's transaction: a
 * server runs two storage jobs at once, each holding one connection for its load and one for reads.
 */
export const POOL_FOR_READS_IN_TRANSACTIONS = 4;

/** The bytes as rows of `storage_file_chunks` (about CHUNK_BYTES each) in the store's database. */
export class DatabaseChunks implements FileBytes {
  readonly location = 'database';
  readonly direct = undefined;
  constructor(private readonly db: Database) {}

  /** The chunk being filled and the one being written, never more than the `declaredBytes` announced. */
  uploadMemory(declaredBytes?: number): number {
    return Math.min(declaredBytes ?? Infinity, 2 * CHUNK_BYTES);
  }

  write(_projectId: number, fileId: number, body: AsyncIterable<Buffer>, size: number | undefined): Promise<number> {
    return writeChunks(this.db, fileId, body, size);
  }

  /** A file deleted while it is read ends the stream with `gone`'s error (one chunk in memory at a time). */
  read(_projectId: number, fileId: number, size: number, gone: () => Error): Readable {
    const { db } = this;
    const sql = 'SELECT bytes FROM storage_file_chunks WHERE file_id = ? AND seq = ?';
    const fetch = (seq: number) => {
      const row = db.get<{ bytes: Buffer }>(sql, [fileId, seq]).then((r) => r?.bytes);
      row.catch(() => undefined); // awaited below; a reader gone early leaves it unread
      return row;
    };
    async function* chunks(): AsyncGenerator<Buffer> {
      let read = 0;
      // the next chunk is read from the database while this one is sent
      let next = fetch(0);
      for (let seq = 0; read < size; seq++) {
        const bytes = await next;
        // deleted (or expired and purged) while it was read
        if (!bytes) throw gone();
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

  /** The chunks are read as the consumer pulls them: a missing one ends the stream with `gone`'s error. */
  open(projectId: number, fileId: number, size: number, gone: () => Error): Promise<Readable> {
    return Promise.resolve(this.read(projectId, fileId, size, gone));
  }

  /**
   * On PostgreSQL the chunks are read on another pooled connection, if the pool has one for every
   * running job's reads besides its load's; SQLite's one connection would make the read wait for
   * the transaction that waits for it.
   */
  readableInTransactions(db: Database): boolean {
    return (db.poolSize ?? 0) >= POOL_FOR_READS_IN_TRANSACTIONS;
  }

  async dropInTransaction(tx: SqlExecutor, fileIds: readonly number[]): Promise<void> {
    for (const id of fileIds) await tx.run('DELETE FROM storage_file_chunks WHERE file_id = ?', [id]);
  }

  async dropDeleted(): Promise<void> {}
}

/**
 * An object store that cannot be reached, or that refuses (a wrong key, the bucket deleted, access
 * denied), as the server answers it: 503 `storage.fileStorageUnavailable` with its message kept
 * (endpoint, bucket, what was refused, no secret) and its own gexCode — never an internal error.
 * A storage job ends `error` with the same message.
 */
function unavailable(error: unknown): unknown {
  if (error instanceof StoreError || !(error instanceof UserError)) return error;
  if (error.gexCode === 'GEX_OBJECT_STORE_UNREACHABLE')
    return StoreError.keboola(
      KEBOOLA_ERRORS.fileStorageUnavailable,
      `${error.message} Retry when it is reachable again.`,
      undefined,
      'GEX_OBJECT_STORE_UNREACHABLE',
    );
  if (error.gexCode === 'GEX_OBJECT_STORE_REFUSED')
    return StoreError.keboola(
      KEBOOLA_ERRORS.fileStorageUnavailable,
      error.message,
      undefined,
      'GEX_OBJECT_STORE_REFUSED',
    );
  return error;
}

async function answerable<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw unavailable(error);
  }
}

/**
 * The bytes as one object per file in a bucket, under fileKey(project, file). An upload streams
 * into the object in parts (ObjectStore.putStream: PART_BYTES each, UPLOAD_QUEUE in flight), a
 * download or an import streams from it; any server or worker with the same settings reads them.
 */
export class ObjectStoreBytes implements FileBytes, DirectBytes {
  readonly location: string;
  readonly direct: DirectBytes = this;
  constructor(readonly objects: ObjectStore) {
    this.location = objects.location;
  }

  presignPut(projectId: number, fileId: number, size: number, expiresSeconds: number): Promise<string> {
    return answerable(() => this.objects.presignPut(fileKey(projectId, fileId), size, expiresSeconds));
  }

  presignGet(projectId: number, fileId: number, expiresSeconds: number): Promise<string> {
    return answerable(() => this.objects.presignGet(fileKey(projectId, fileId), expiresSeconds));
  }

  startMultipart(projectId: number, fileId: number): Promise<string> {
    return answerable(() => this.objects.createMultipart(fileKey(projectId, fileId)));
  }

  presignPart(
    projectId: number,
    fileId: number,
    uploadId: string,
    partNumber: number,
    expiresSeconds: number,
  ): Promise<string> {
    return answerable(() => this.objects.presignPart(fileKey(projectId, fileId), uploadId, partNumber, expiresSeconds));
  }

  completeMultipart(
    projectId: number,
    fileId: number,
    uploadId: string,
    parts: readonly CompletedPart[],
  ): Promise<void> {
    return answerable(() => this.objects.completeMultipart(fileKey(projectId, fileId), uploadId, parts));
  }

  abortMultipart(projectId: number, fileId: number, uploadId: string): Promise<void> {
    return answerable(() => this.objects.abortMultipart(fileKey(projectId, fileId), uploadId));
  }

  size(projectId: number, fileId: number): Promise<number | undefined> {
    return answerable(() => this.objects.head(fileKey(projectId, fileId)));
  }

  /** The part being filled and those being sent. */
  uploadMemory(declaredBytes?: number): number {
    return Math.min(declaredBytes ?? Infinity, OBJECT_UPLOAD_MEMORY);
  }

  async write(
    projectId: number,
    fileId: number,
    body: AsyncIterable<Buffer>,
    size: number | undefined,
  ): Promise<number> {
    const stored = await answerable(() =>
      this.objects.putStream(fileKey(projectId, fileId), Readable.from(body, { objectMode: false }), size),
    );
    return stored.size;
  }

  read(projectId: number, fileId: number): Readable {
    const { objects } = this;
    async function* bytes(): AsyncGenerator<Buffer> {
      const stream = await answerable(() => objects.getStream(fileKey(projectId, fileId)));
      try {
        for await (const piece of stream) yield piece as Buffer;
      } catch (error) {
        throw unavailable(error);
      } finally {
        stream.destroy();
      }
    }
    return Readable.from(bytes(), { objectMode: false });
  }

  /** One HEAD first: an object missing or of another size is refused before a byte is answered. */
  async open(projectId: number, fileId: number, size: number): Promise<Readable> {
    const stored = await answerable(() => this.objects.head(fileKey(projectId, fileId)));
    if (stored !== size) {
      throw StoreError.keboola(
        KEBOOLA_ERRORS.filesNotFound,
        `The bytes of file ${fileId} are ${stored === undefined ? 'not' : `${stored} bytes rather than ${size}`} in ${this.location} ` +
          '(uploaded before --file-storage was set, or changed in the bucket); upload the file again.',
        undefined,
        'GEX_FILE_NOT_FOUND',
      );
    }
    return this.read(projectId, fileId);
  }

  /** The object is read over HTTP, never on a connection of the database. */
  readableInTransactions(): boolean {
    return true;
  }

  async dropInTransaction(): Promise<void> {}

  async dropDeleted(files: ReadonlyArray<{ projectId: number; id: number }>): Promise<void> {
    if (files.length > 0) await this.objects.deleteMany(files.map((f) => fileKey(f.projectId, f.id)));
  }
}

/**
 * Stores `body` as chunks 0, 1, … of file `id` (CHUNK_BYTES each, the last one shorter); returns
 * its size. The pieces are copied as they arrive into one of the upload's two buffers while the
 * other one is written, then the two swap: the upload holds nothing else (uploadMemory) and
 * allocates no more than them. `declared`: the size announced (the body is bounded by the caller).
 */
async function writeChunks(db: Database, id: number, body: AsyncIterable<Buffer>, declared?: number): Promise<number> {
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
      let buffer = piece;
      size += buffer.length;
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
