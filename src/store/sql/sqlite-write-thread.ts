import { Worker } from 'node:worker_threads';
import type { SqlParam } from './database.js';

/** What the thread opens its connection with. */
export interface WriteThreadSettings {
  readonly file: string;
  /** the `synchronous` pragma of the main connection (FULL, NORMAL) */
  readonly synchronous: string;
  /** memory both threads see: SLOTS slots of SLOT_BYTES, a parameter's bytes copied into one */
  readonly shared: SharedArrayBuffer;
}

/** Bytes of one slot of shared memory: a file's chunk (CHUNK_BYTES) fits. */
export const SLOT_BYTES = 1024 * 1024;
/** Slots: one statement in flight per connection sharing the thread, mostly one. */
const SLOTS = 2;

/** A parameter's bytes in slot `slot` of the shared memory, `length` of them. */
export interface SharedBytes {
  slot: number;
  length: number;
}

export interface WriteRequest {
  id: number;
  sql: string;
  /** the statement's parameters; bytes that fit in a free slot are sent there (`shared` names which) */
  params: Array<SqlParam | SharedBytes>;
  /** indexes of `params` that are SharedBytes */
  shared: number[];
}

export type WriteReply =
  { id: number; changes: number; error?: undefined } | { id: number; error: { message: string; code?: string } };

/** A statement the thread's connection failed, with SQLite's code (SQLITE_BUSY, SQLITE_CONSTRAINT_…). */
export class WriteThreadError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'WriteThreadError';
  }
}

type Pending = { resolve: (result: { changes: number }) => void; reject: (error: Error) => void; slots: number[] };

/**
 * A worker thread with a connection of its own to a SQLite file (sqlite-write-worker.ts), for
 * writes large enough that SQLite's synchronous work — a megabyte of pages written, the fsync of
 * the commit, a WAL checkpoint it triggers (hundreds of milliseconds on a busy disk) — must not
 * run on the event loop. Started on first use and again after it died; it does not keep the
 * process alive while idle. The caller serialises its statements with the main connection's (the
 * thread never contends with it for the write lock). Bytes are copied into a slot of memory both
 * threads share (else cloned with the message): a chunk written costs the thread no allocation —
 * a megabyte a chunk of clones was garbage that the thread's heap collected only tens of
 * megabytes later.
 */
export class SqliteWriteThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  /** the shared memory, made with the first thread (a process that never writes large values has none) */
  private memory: Buffer | undefined;
  private readonly freeSlots = Array.from({ length: SLOTS }, (_, i) => i);

  constructor(private readonly settings: Omit<WriteThreadSettings, 'shared'>) {}

  /** Runs `sql`; the caller may reuse its Buffer parameters as soon as this is called. */
  run(sql: string, params: SqlParam[]): Promise<{ changes: number }> {
    const worker = this.running();
    const memory = this.memory!;
    const id = this.nextId++;
    const slots: number[] = [];
    const shared: number[] = [];
    const sent = params.map((p, i): SqlParam | SharedBytes => {
      if (!Buffer.isBuffer(p) || p.length > SLOT_BYTES || this.freeSlots.length === 0) return p;
      const slot = this.freeSlots.pop()!;
      p.copy(memory, slot * SLOT_BYTES);
      slots.push(slot);
      shared.push(i);
      return { slot, length: p.length };
    });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, slots });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, sql, params: sent, shared } satisfies WriteRequest);
    });
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    this.memory ??= Buffer.from(new SharedArrayBuffer(SLOTS * SLOT_BYTES));
    const workerData: WriteThreadSettings = { ...this.settings, shared: this.memory.buffer as SharedArrayBuffer };
    // next to this module both in dist/src/store/sql and in the CLI bundle (an entry of its own there)
    const worker = new Worker(new URL('./sqlite-write-worker.js', import.meta.url), { workerData });
    worker.unref();
    worker.on('message', (reply: WriteReply) => this.settle(reply));
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`the SQLite write thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private settle(reply: WriteReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    this.freeSlots.push(...pending.slots);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.error) pending.reject(new WriteThreadError(reply.error.message, reply.error.code));
    else pending.resolve({ changes: reply.changes });
  }

  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const pending of this.pending.values()) {
      this.freeSlots.push(...pending.slots);
      pending.reject(error);
    }
    this.pending.clear();
  }

  /** Closes the thread's connection and ends it (statements still running finish first). */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref();
    worker.postMessage('close');
    await exited;
  }
}
