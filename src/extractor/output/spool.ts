import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { ApplicationError } from '../../common/errors.js';
import { decodeJson, isJsonObject, stringifyExact, type JsonObject, type JsonValue } from '../../php-compat/index.js';

/** One `process()` call of the JSON parser: records of a data type plus injected columns. */
export interface SpoolBatch {
  dataType: string;
  injected: JsonObject;
  rows: JsonValue[];
}

/**
 * The parser's queue on disk. GE analyses everything before it writes any CSV (headers cover the
 * whole run); keeping the queue in a file instead of memory keeps memory flat however many pages
 * a run fetches. One batch per line, in a JSON form that decodes back to identical values.
 */
export class Spool {
  private stream: WriteStream | null;
  /** a write error (e.g. disk full), rethrown by the next call; nothing may crash the process */
  private failure: Error | null = null;
  batches = 0;

  private constructor(
    private readonly dir: string,
    readonly file: string,
  ) {
    this.stream = createWriteStream(file);
    this.stream.on('error', (error) => {
      this.failure ??= error;
    });
  }

  private check(): void {
    if (this.failure) throw new ApplicationError(`Cannot write the record queue ${this.file}: ${this.failure.message}`, { cause: this.failure });
  }

  static async create(tmpRoot = os.tmpdir()): Promise<Spool> {
    const dir = await mkdtemp(path.join(tmpRoot, 'gex-spool-'));
    return new Spool(dir, path.join(dir, 'batches.jsonl'));
  }

  append(batch: SpoolBatch): void {
    this.check();
    const line = `[${stringifyExact(batch.dataType)},${stringifyExact(batch.injected)},${stringifyExact(batch.rows)}]\n`;
    this.stream!.write(line);
    this.batches++;
  }

  /** Back-pressure between pages: waits while the file stream holds more than its buffer, so memory stays flat. */
  async settle(): Promise<void> {
    this.check();
    if (this.stream?.writableNeedDrain) await once(this.stream, 'drain');
  }

  async *read(): AsyncGenerator<SpoolBatch> {
    if (this.stream) {
      this.check();
      this.stream.end();
      await once(this.stream, 'finish');
      this.stream = null;
    }
    for await (const line of readLines(this.file)) {
      const [dataType, injected, rows] = decodeJson(line) as [string, JsonValue, JsonValue[]];
      yield { dataType, injected: isJsonObject(injected) ? injected : new Map(), rows };
    }
  }

  async dispose(): Promise<void> {
    this.stream?.destroy();
    this.stream = null;
    await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * Lines of a file, pulled only as fast as the consumer takes them (the stream's async iterator
 * applies back-pressure; readline's line events would queue up while CSVs are being written).
 */
async function* readLines(file: string): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
    const text = rest + (chunk as string);
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      yield text.slice(start, nl);
      start = nl + 1;
    }
    rest = text.slice(start);
  }
  if (rest !== '') yield rest;
}
