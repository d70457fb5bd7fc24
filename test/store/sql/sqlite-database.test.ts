import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UniqueViolation } from '../../../src/store/sql/database.js';
import { SqliteDatabase } from '../../../src/store/sql/sqlite-database.js';
import { repoRoot } from '../../support/cli.js';

/** The SQLite adapter's turns of the event loop and its write thread (issue 33 item 4). */
describe('SQLite adapter: event-loop turns and the write thread', function () {
  this.timeout(30_000);
  let dir: string;
  let file: string;
  const opened: SqliteDatabase[] = [];

  async function open(options: ConstructorParameters<typeof SqliteDatabase>[1] = {}): Promise<SqliteDatabase> {
    const db = new SqliteDatabase(file, options);
    opened.push(db);
    await db.exec('CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY, bytes BLOB)');
    return db;
  }

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-sqlite-adapter-'));
    file = path.join(dir, 'store.sqlite');
  });
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The order in which three queued reads and a setImmediate scheduled after them happen. */
  async function orderOfThreeReads(db: SqliteDatabase): Promise<string[]> {
    const order: string[] = [];
    const reads = [1, 2, 3].map((n) => db.get('SELECT ? AS n', [n]).then(() => order.push(`read ${n}`)));
    setImmediate(() => order.push('turn'));
    await Promise.all(reads);
    await new Promise((resolve) => setImmediate(resolve));
    return order;
  }

  it('gives the event loop a turn once queued operations have run back to back for a slice', async () => {
    // a slice of 0 ms: every queued operation after the first waits for a turn of the loop
    assert.deepEqual(await orderOfThreeReads(await open({ sliceMs: 0 })), ['read 1', 'turn', 'read 2', 'read 3']);
    // quick operations within the default slice run on without one
    assert.deepEqual(await orderOfThreeReads(await open()), ['read 1', 'read 2', 'read 3', 'turn']);
  });

  it('runs large writes on its write thread: seen by the main connection, unique keys kept, bytes exact', async () => {
    const db = await open();
    const bytes = Buffer.alloc(1024 * 1024 + 7, 9);
    assert.deepEqual(await db.runLarge('INSERT INTO chunks (id, bytes) VALUES (?, ?)', [1, bytes]), { changes: 1 });
    const row = await db.get<{ bytes: Buffer }>('SELECT bytes FROM chunks WHERE id = 1');
    assert.ok(row?.bytes.equals(bytes));
    // a subarray is sent as what it shows, not as its whole buffer
    await db.runLarge('INSERT INTO chunks (id, bytes) VALUES (?, ?)', [2, bytes.subarray(5, 10)]);
    assert.equal((await db.get<{ n: number }>('SELECT LENGTH(bytes) AS n FROM chunks WHERE id = 2'))?.n, 5);
    await assert.rejects(db.runLarge('INSERT INTO chunks (id, bytes) VALUES (?, ?)', [1, bytes]), UniqueViolation);
    await assert.rejects(db.runLarge('INSERT INTO nowhere VALUES (?)', [1]), /no such table: nowhere/);
    // a separate connection shares the thread; closing it leaves the thread to its owner
    const separate = db.separateConnection();
    await separate.runLarge('INSERT INTO chunks (id, bytes) VALUES (?, ?)', [3, bytes]);
    await separate.close();
    await db.runLarge('INSERT INTO chunks (id, bytes) VALUES (?, ?)', [4, bytes]);
    assert.equal((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM chunks'))?.n, 4);
  });

  it('writes bytes exactly from several connections at once: through shared memory or, past its slots, cloned', async () => {
    const db = await open();
    const others = [db.separateConnection(), db.separateConnection(), db.separateConnection()];
    const chunks = [0, 1, 2, 3].map((i) => Buffer.alloc(1024 * 1024, i + 1));
    // the caller may refill its buffer once the write has been handed over
    const reused = Buffer.alloc(1024 * 1024, 9);
    const writes = [db, ...others].map((c, i) =>
      c.runLarge('INSERT INTO chunks (id, bytes) VALUES (?, ?)', [i, chunks[i]]),
    );
    await Promise.all(writes);
    await db.runLarge('INSERT INTO chunks (id, bytes) VALUES (?, ?)', [10, reused]);
    reused.fill(0);
    for (const [i, chunk] of chunks.entries()) {
      const row = await db.get<{ bytes: Buffer }>('SELECT bytes FROM chunks WHERE id = ?', [i]);
      assert.ok(row?.bytes.equals(chunk), `chunk ${i}`);
    }
    assert.ok((await db.get<{ bytes: Buffer }>('SELECT bytes FROM chunks WHERE id = 10'))?.bytes.every((b) => b === 9));
    for (const other of others) await other.close();
  });

  it('waits while another process holds the write lock, as other statements do, then writes', async () => {
    const db = await open();
    const script = `
      const Database = require('better-sqlite3');
      const db = new Database(process.argv[1]);
      db.exec('BEGIN IMMEDIATE');
      db.prepare('DELETE FROM chunks WHERE id = -1').run();
      process.stdout.write('locked\\n');
      process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); });
    `;
    const holder = spawn(process.execPath, ['-e', script, file], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    let written = false;
    const write = db.runLarge('INSERT INTO chunks (id, bytes) VALUES (?, ?)', [7, Buffer.from('x')]).then(() => {
      written = true;
    });
    // the main connection keeps answering reads meanwhile
    assert.equal((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM chunks'))?.n, 0);
    assert.equal(written, false);
    holder.stdin.end('commit\n');
    await exited;
    await write;
    assert.equal((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM chunks'))?.n, 1);
  });
});
