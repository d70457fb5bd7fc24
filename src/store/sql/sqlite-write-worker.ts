import BetterSqlite3 from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { StatementCache } from './statement-cache.js';
import {
  SLOT_BYTES,
  type SharedBytes,
  type WriteReply,
  type WriteRequest,
  type WriteThreadSettings,
} from './sqlite-write-thread.js';

/**
 * A connection of its own to the store's SQLite file, on a worker thread: runs the large writes
 * (a file's 1 MiB chunks) whose page writes, fsync and WAL checkpoint would otherwise hold the
 * main thread's event loop. One statement at a time, in the order they come; a statement that
 * finds the database locked is answered `busy` at once (the main thread waits and retries), as on
 * the main connection.
 *
 * The WAL these writes grow is checkpointed here, after the statement has been answered: SQLite's
 * automatic checkpoint would run inside the commit — while the main thread waits for it — or, at
 * 1000 pages, inside a commit of the main connection, on the event loop. A passive checkpoint runs
 * beside other connections' reads and writes.
 */
const settings = workerData as WriteThreadSettings;
const db = new BetterSqlite3(settings.file);
db.pragma('busy_timeout = 0');
db.pragma('foreign_keys = ON');
db.pragma(`synchronous = ${settings.synchronous}`);
db.pragma('wal_autocheckpoint = 0');
/**
 * Bytes written between checkpoints: about 1000 pages, SQLite's own threshold (half as many made
 * a 100 MiB upload ~20% slower: twice the fsyncs). The main connection's automatic checkpoint at
 * 1000 pages finds this one running (and skips) rather than doing it on the event loop.
 */
const CHECKPOINT_BYTES = 4 * 1024 * 1024;
let sinceCheckpoint = 0;
const statements = new StatementCache<BetterSqlite3.Statement>((sql) => db.prepare(sql), 50);
const memory = Buffer.from(settings.shared);

/**
 * The statement's parameters: bytes in a slot of the shared memory as a Buffer over it (SQLite
 * copies what it binds), a cloned Buffer (a plain Uint8Array after the message) made a Buffer again.
 */
function bound(request: WriteRequest): unknown[] {
  return request.params.map((p: unknown, i) => {
    if (request.shared.includes(i)) {
      const { slot, length } = p as SharedBytes;
      return memory.subarray(slot * SLOT_BYTES, slot * SLOT_BYTES + length);
    }
    return p instanceof Uint8Array && !Buffer.isBuffer(p) ? Buffer.from(p.buffer, p.byteOffset, p.length) : p;
  });
}

parentPort!.on('message', (request: WriteRequest | 'close') => {
  if (request === 'close') {
    db.close();
    parentPort!.close();
    return;
  }
  const params = bound(request);
  let reply: WriteReply;
  try {
    reply = { id: request.id, changes: statements.get(request.sql).run(...params).changes };
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    reply = {
      id: request.id,
      error: { message: (e as Error).message, code: typeof code === 'string' ? code : undefined },
    };
  }
  parentPort!.postMessage(reply);
  for (const p of params) sinceCheckpoint += p instanceof Uint8Array ? p.length : 0;
  if (sinceCheckpoint >= CHECKPOINT_BYTES) {
    sinceCheckpoint = 0;
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // another connection is checkpointing (or the database is locked): the WAL is left for it
    }
  }
});
