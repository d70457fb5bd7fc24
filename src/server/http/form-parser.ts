import { Worker } from 'node:worker_threads';
import { FormLimitExceeded, InvalidUtf8, parseFormBytes } from './form-text.js';

/** Bodies up to this size are parsed at once: their worst case is a fraction of a millisecond. */
const INLINE_LIMIT_BYTES = 1024;

type Reply = { id: number; value?: unknown; limit?: string; invalidUtf8?: boolean; failure?: string };
type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/**
 * One worker thread, started on first use and restarted if it dies. It does not keep the process
 * alive. Parses run one after another in it; the main thread only hands over the bytes (moved,
 * not copied, when the body owns its memory) and receives the parsed fields.
 */
class FormParserWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** parses handed to the thread and not answered yet */
  get inFlight(): number {
    return this.pending.size;
  }

  parse(bytes: Buffer): Promise<unknown> {
    const worker = this.running();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      const ownsMemory =
        bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
      if (ownsMemory) worker.postMessage({ id, bytes }, [bytes.buffer]);
      else worker.postMessage({ id, bytes });
    });
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    // next to this module both in dist/src/server and in the CLI bundle (an entry of its own there)
    const worker = new Worker(new URL('./form-parser-worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (error) => this.fail(worker, error));
    worker.on('exit', (code) => this.fail(worker, new Error(`the form parser thread exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private settle(reply: Reply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.limit !== undefined) pending.reject(new FormLimitExceeded(reply.limit));
    else if (reply.invalidUtf8) pending.reject(new InvalidUtf8());
    else if (reply.failure !== undefined) pending.reject(new Error(`Form parser failed: ${reply.failure}`));
    else pending.resolve(reply.value);
  }

  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }
}

const worker = new FormParserWorker();

/** How many form bodies the parser thread holds right now (an observable for tests and metrics). */
export function formParsesInThread(): number {
  return worker.inFlight;
}

/**
 * A form body as plain objects, arrays and strings (undefined when empty); throws
 * FormLimitExceeded or InvalidUtf8. Takes over `bytes`: the caller must not use them again.
 */
export function parseFormAsync(bytes: Buffer): Promise<unknown> {
  if (bytes.byteLength <= INLINE_LIMIT_BYTES) return Promise.resolve().then(() => parseFormBytes(bytes));
  return worker.parse(bytes);
}
