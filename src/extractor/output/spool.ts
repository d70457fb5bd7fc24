import { createReadStream, createWriteStream, rmSync, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { ApplicationError } from '../../common/errors.js';
import { JsonFloat, type JsonObject, type JsonValue } from '../../json/index.js';

/** One `process()` call of the JSON parser: records of a data type plus injected columns. */
export interface SpoolBatch {
  dataType: string;
  injected: JsonObject;
  rows: JsonValue[];
}

/**
 * Where a batch's records came from: a response body and the steps that found them in it. The
 * spool then keeps the body, bytes the run already holds, instead of serializing the records, and
 * finds the records in it again only when the queue is read.
 */
export interface PageSource {
  body: Buffer;
  status: number;
  recipe: RecordRecipe;
}

/** The steps from a response body to its records; must give equal records every time. */
export interface RecordRecipe {
  records(body: Buffer, status: number): JsonValue[];
}

/** Frame kinds: the records V8-serialized, or a response body with the recipe that gives them. */
const SERIALIZED = 0;
const BODY = 1;

/**
 * The parser's queue on disk. GE analyses everything before it writes any CSV (headers cover the
 * whole run); keeping the queue in a file instead of memory keeps memory flat however many pages
 * a run fetches. A batch with a `PageSource` is queued as its response body (the records are found
 * in it again when read: no serializing on the way, the usual case of a run whose drafts hold); any
 * other batch is V8-serialized (several times faster than JSON text, and Maps, bigints and key
 * order survive as they are). Each frame is prefixed by its byte length and kind.
 */
export class Spool {
  private stream: WriteStream | null;
  /** a write error (e.g. disk full), rethrown by the next call; nothing may crash the process */
  private failure: Error | null = null;
  batches = 0;
  /** the recipes of queued bodies, by the index their frames name (one per job, not per page) */
  private readonly recipes: RecordRecipe[] = [];
  private readonly recipeIndex = new Map<RecordRecipe, number>();
  /** serialized fields of body frames without injected columns, by recipe, status and data type */
  private readonly plainMeta = new Map<string, Buffer>();
  /** frames not yet handed to the file stream, and their bytes */
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  /** Bytes of frames gathered in memory, not yet handed to the file (below SPOOL_WRITE_BYTES). */
  get bytesInMemory(): number {
    return this.pendingBytes;
  }

  private constructor(
    /** the spool's own temporary folder, removed by `dispose()` */
    readonly dir: string,
    readonly file: string,
  ) {
    this.stream = createWriteStream(file, { highWaterMark: BUFFER_BYTES });
    this.stream.on('error', (error) => {
      this.failure ??= error;
    });
  }

  private check(): void {
    if (this.failure)
      throw new ApplicationError(
        'GEX_TABLE_WRITE_FAILED',
        `Cannot write the record queue ${this.file}: ${this.failure.message}`,
        { cause: this.failure },
      );
  }

  static async create(tmpRoot = os.tmpdir()): Promise<Spool> {
    const dir = await mkdtemp(path.join(tmpRoot, 'gex-spool-'));
    liveSpools.track(dir);
    return new Spool(dir, path.join(dir, 'batches.bin'));
  }

  append(batch: SpoolBatch, source?: PageSource): void {
    this.check();
    if (source) this.appendBody(batch, source);
    else {
      const frame = v8.serialize([batch.dataType, batch.injected, batch.rows]);
      this.queue(frameHead(frame.length, SERIALIZED), frame);
    }
    this.batches++;
  }

  /** The body is queued as it is (not copied into a frame: a huge response is not held twice). */
  private appendBody(batch: SpoolBatch, { body, status, recipe }: PageSource): void {
    let index = this.recipeIndex.get(recipe);
    if (index === undefined) {
      index = this.recipes.push(recipe) - 1;
      this.recipeIndex.set(recipe, index);
    }
    const meta = this.metaOf(batch, index, status);
    const head = frameHead(4 + meta.length + body.length, BODY);
    this.queue(Buffer.concat([head, uint32(meta.length), meta]), body);
  }

  /**
   * A body frame's own fields, serialized. Pages of one job without injected columns repeat the
   * same ones: made once for them (the few combinations a run has; any other batch is made anew).
   */
  private metaOf(batch: SpoolBatch, index: number, status: number): Buffer {
    if (batch.injected.size > 0) return v8.serialize([batch.dataType, batch.injected, index, status]);
    const key = `${index} ${status} ${batch.dataType}`;
    let meta = this.plainMeta.get(key);
    if (!meta) {
      if (this.plainMeta.size >= MAX_PLAIN_META) this.plainMeta.clear();
      meta = v8.serialize([batch.dataType, batch.injected, index, status]);
      this.plainMeta.set(key, meta);
    }
    return meta;
  }

  /**
   * Frames wait in memory until a write's worth has gathered, then go to the file in one write:
   * a write per page was a file system call per page, and most of the spool's time.
   */
  private queue(head: Buffer, payload: Buffer): void {
    this.pending.push(head, payload);
    this.pendingBytes += head.length + payload.length;
    if (this.pendingBytes >= SPOOL_WRITE_BYTES) this.writePending();
  }

  private writePending(): void {
    if (this.pending.length === 0) return;
    const stream = this.stream!;
    stream.cork();
    for (const part of this.pending) stream.write(part);
    stream.uncork();
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Back-pressure between pages: waits while the file stream holds more than its buffer, so memory stays flat. */
  async settle(): Promise<void> {
    this.check();
    if (this.stream?.writableNeedDrain) await once(this.stream, 'drain');
  }

  /** Ends writing: everything appended is in the file. */
  async finish(): Promise<void> {
    if (!this.stream) return;
    this.check();
    this.writePending();
    this.stream.end();
    await once(this.stream, 'finish');
    this.stream = null;
  }

  async *read(): AsyncGenerator<SpoolBatch> {
    await this.finish();
    for await (const { kind, frame } of readFrames(this.file)) {
      if (kind === BODY) {
        const metaEnd = 4 + frame.readUInt32LE(0);
        const [dataType, injected, index, status] = v8.deserialize(frame.subarray(4, metaEnd)) as [
          string,
          JsonObject,
          number,
          number,
        ];
        const rows = this.recipes[index].records(frame.subarray(metaEnd), status);
        yield { dataType, injected: restoreFloats(injected) as JsonObject, rows };
      } else {
        const [dataType, injected, rows] = v8.deserialize(frame) as [string, JsonObject, JsonValue[]];
        yield { dataType, injected: restoreFloats(injected) as JsonObject, rows: restoreFloats(rows) as JsonValue[] };
      }
    }
  }

  async dispose(): Promise<void> {
    this.pending = [];
    this.stream?.destroy();
    this.stream = null;
    await rm(this.dir, { recursive: true, force: true });
    liveSpools.forget(this.dir);
  }
}

/**
 * Spool folders not yet disposed, removed when the process exits anyway (process.exit on a second
 * stop signal, which skips the normal cleanup): no record queue is left in the temporary folder.
 */
const liveSpools = new (class {
  private readonly dirs = new Set<string>();
  private hooked = false;

  track(dir: string): void {
    this.dirs.add(dir);
    if (this.hooked) return;
    this.hooked = true;
    process.on('exit', () => {
      for (const d of this.dirs) {
        try {
          rmSync(d, { recursive: true, force: true });
        } catch {
          // exiting anyway
        }
      }
    });
  }

  forget(dir: string): void {
    this.dirs.delete(dir);
  }
})();

const BUFFER_BYTES = 1024 * 1024;
/** distinct body frame fields kept serialized at most */
const MAX_PLAIN_META = 64;
/** frames gathered before they are written */
export const SPOOL_WRITE_BYTES = 256 * 1024;
/** a frame's length and kind */
const HEAD_BYTES = 5;

function uint32(value: number): Buffer {
  const buffer = Buffer.allocUnsafe(4);
  buffer.writeUInt32LE(value);
  return buffer;
}

function frameHead(length: number, kind: number): Buffer {
  if (length > MAX_FRAME_BYTES)
    throw new ApplicationError('GEX_TABLE_WRITE_FAILED', `A page of ${length} bytes is too large for the record queue`);
  const head = Buffer.allocUnsafe(HEAD_BYTES);
  head.writeUInt32LE(length);
  head.writeUInt8(kind, 4);
  return head;
}

const MAX_FRAME_BYTES = 0xffff_ffff;

/**
 * The frames of a spool file, pulled only as fast as the consumer takes them (the stream's async
 * iterator applies back-pressure while CSVs are being written). A frame longer than the read
 * buffer is gathered chunk by chunk and joined once.
 */
async function* readFrames(file: string): AsyncGenerator<{ kind: number; frame: Buffer }> {
  let pending: Buffer = Buffer.alloc(0);
  /** chunks of a frame that does not fit what is pending, and their bytes in all */
  let gathered: Buffer[] = [];
  let gatheredBytes = 0;
  let needed = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: BUFFER_BYTES })) {
    if (gathered.length > 0) {
      gathered.push(chunk as Buffer);
      gatheredBytes += (chunk as Buffer).length;
      if (gatheredBytes < needed) continue;
      pending = Buffer.concat(gathered, gatheredBytes);
      gathered = [];
      gatheredBytes = 0;
    } else pending = pending.length === 0 ? (chunk as Buffer) : Buffer.concat([pending, chunk as Buffer]);
    let start = 0;
    while (pending.length - start >= HEAD_BYTES) {
      const end = start + HEAD_BYTES + pending.readUInt32LE(start);
      if (end > pending.length) break;
      yield { kind: pending.readUInt8(start + 4), frame: pending.subarray(start + HEAD_BYTES, end) };
      start = end;
    }
    pending = pending.subarray(start);
    if (pending.length >= HEAD_BYTES) {
      needed = HEAD_BYTES + pending.readUInt32LE(0);
      if (needed > pending.length + BUFFER_BYTES) {
        gathered = [pending];
        gatheredBytes = pending.length;
      }
    }
  }
  if (pending.length > 0 || gathered.length > 0)
    throw new ApplicationError('GEX_TABLE_WRITE_FAILED', `The record queue ${file} ends in a truncated batch`);
}

/**
 * V8 serialization keeps Maps, arrays, strings, numbers and bigints, but a JsonFloat comes back as
 * a plain `{value}` object — the only plain object the value model has — so turn those back.
 */
function restoreFloats(value: JsonValue): JsonValue {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (item !== null && typeof item === 'object') value[i] = restoreFloats(item);
    }
    return value;
  }
  if (value instanceof Map) {
    for (const [key, item] of value) if (item !== null && typeof item === 'object') value.set(key, restoreFloats(item));
    return value;
  }
  return new JsonFloat((value as { value: number }).value);
}
