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
 * The parser's queue on disk. GE analyses everything before it writes any CSV (headers cover the
 * whole run); keeping the queue in a file instead of memory keeps memory flat however many pages
 * a run fetches. Batches are V8-serialized (several times faster than JSON text, and Maps,
 * bigints and key order survive as they are), each framed by its byte length.
 */
export class Spool {
  private stream: WriteStream | null;
  /** a write error (e.g. disk full), rethrown by the next call; nothing may crash the process */
  private failure: Error | null = null;
  batches = 0;

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

  append(batch: SpoolBatch): void {
    this.check();
    const frame = v8.serialize([batch.dataType, batch.injected, batch.rows]);
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32LE(frame.length);
    this.stream!.write(Buffer.concat([length, frame]));
    this.batches++;
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
    this.stream.end();
    await once(this.stream, 'finish');
    this.stream = null;
  }

  async *read(): AsyncGenerator<SpoolBatch> {
    await this.finish();
    for await (const frame of readFrames(this.file)) {
      const [dataType, injected, rows] = v8.deserialize(frame) as [string, JsonObject, JsonValue[]];
      yield { dataType, injected: restoreFloats(injected) as JsonObject, rows: restoreFloats(rows) as JsonValue[] };
    }
  }

  async dispose(): Promise<void> {
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

/**
 * The frames of a spool file, pulled only as fast as the consumer takes them (the stream's async
 * iterator applies back-pressure while CSVs are being written).
 */
async function* readFrames(file: string): AsyncGenerator<Buffer> {
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file, { highWaterMark: BUFFER_BYTES })) {
    pending = pending.length === 0 ? (chunk as Buffer) : Buffer.concat([pending, chunk as Buffer]);
    let start = 0;
    while (pending.length - start >= 4) {
      const end = start + 4 + pending.readUInt32LE(start);
      if (end > pending.length) break;
      yield pending.subarray(start + 4, end);
      start = end;
    }
    pending = pending.subarray(start);
  }
  if (pending.length > 0)
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
