import { Worker } from 'node:worker_threads';
import type { SqlParam } from './database.js';

/** What the thread opens its connection with. */
export interface WriteThreadSettings {
  readonly file: string;
  /** the `synchronous` pragma of the main connection (FULL, NORMAL) */
  readonly synchronous: string;
}

export interface WriteRequest {
  id: number;
  sql: string;
  params: SqlParam[];
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

type Pending = { resolve: (result: { changes: number }) => void; reject: (error: Error) => void };

/**
 * A worker thread with a connection of its own to a SQLite file (sqlite-write-worker.ts), for
 * writes large enough that SQLite's synchronous work — a megabyte of pages written, the fsync of
 * the commit, a WAL checkpoint it triggers (hundreds of milliseconds on a busy disk) — must not
 * run on the event loop. Started on first use and again after it died; it does not keep the
 * process alive while idle. The caller serialises its statements with the main connection's (the
 * thread never contends with it for the write lock); parameters are copied to the thread.
 */
export class SqliteWriteThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(private readonly settings: WriteThreadSettings) {}

  run(sql: string, params: SqlParam[]): Promise<{ changes: number }> {
    const worker = this.running();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, sql, params } satisfies WriteRequest);
    });
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    // next to this module both in dist/src/store/sql and in the CLI bundle (an entry of its own there)
    const worker = new Worker(new URL('./sqlite-write-worker.js', import.meta.url), { workerData: this.settings });
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
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.error) pending.reject(new WriteThreadError(reply.error.message, reply.error.code));
    else pending.resolve({ changes: reply.changes });
  }

  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const pending of this.pending.values()) pending.reject(error);
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
