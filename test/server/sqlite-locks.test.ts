import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { builtinComponents } from '../../src/cli/builtin-components.js';
import { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';
import { SecretCipher } from '../../src/store/encryption.js';
import { SqliteDatabase, type BusyRetryOptions } from '../../src/store/sql/sqlite-database.js';
import { repoRoot } from '../support/cli.js';
import { sqliteBackend, TEST_KEY, type BackendFactory } from '../support/store.js';
import { configsPath, TestServer } from '../support/storage-api-server.js';

/** Another process that holds SQLite's write lock on `file` (BEGIN IMMEDIATE) until `release()`. */
class LockHolder {
  private constructor(private readonly child: ChildProcess) {}

  static start(file: string): Promise<LockHolder> {
    const script = `
      const Database = require('better-sqlite3');
      const db = new Database(process.argv[1]);
      db.exec('BEGIN IMMEDIATE');
      db.prepare("UPDATE schema_migrations SET description = description").run();
      process.stdout.write('locked\\n');
      process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.stdout.write('released\\n'); });
    `;
    const child = spawn(process.execPath, ['-e', script, file], { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] });
    return new Promise((resolve, reject) => {
      child.stdout.once('data', (chunk: Buffer) =>
        String(chunk).startsWith('locked') ? resolve(new LockHolder(child)) : reject(new Error(String(chunk))),
      );
      child.once('exit', (code) => reject(new Error(`lock holder exited with ${code}`)));
    });
  }

  /** Commits and ends the other process; resolves once the lock is gone. */
  release(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.stdin!.end('commit\n');
    });
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill();
  }
}

/** A SQLite backend whose busy waiting uses `busy`. */
function sqliteWithBusy(busy: BusyRetryOptions): BackendFactory {
  return {
    ...sqliteBackend,
    async open() {
      const store = await sqliteBackend.fresh();
      const key = Buffer.from(TEST_KEY.GEX_MASTER_KEY, 'hex');
      const backend = await EmbeddedBackend.open(
        new SqliteDatabase(store.location, { busy }),
        new SecretCipher(key),
        store.location,
        { builtinComponents: builtinComponents() },
      );
      return {
        backend,
        location: store.location,
        async dispose() {
          await backend.close();
          await store.dispose();
        },
      };
    },
  };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe('SQLite store locked by another process', function () {
  this.timeout(60_000);
  let server: TestServer;
  let holder: LockHolder | undefined;
  afterEach(async () => {
    holder?.kill();
    holder = undefined;
    await server?.close();
  });

  it('keeps answering reads at once while a write waits (asynchronously) for the lock, then saves the write', async () => {
    server = await TestServer.start();
    const config = await server.createConfig({ name: 'Locked', configuration: { n: 0 } });
    holder = await LockHolder.start(server.location);

    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    let writeSettled = false;
    const write = server
      .put(configsPath(config.id), { json: { configuration: { n: 1 } } })
      .finally(() => (writeSettled = true));
    // the lock is held until the holder releases it: every read answered before that was answered
    // while the write waited, which a synchronous wait (the event loop held) could not allow
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const { value, ms } = await timed(() => server.get(configsPath(config.id)));
      assert.equal(value.status, 200);
      assert.deepEqual(value.body.configuration, { n: 0 }, 'the read sees the last committed data');
      assert.equal(writeSettled, false, `read ${i + 1} was answered while the write waited for the lock`);
      latencies.push(ms);
    }
    loop.disable();
    // figures only: on a loaded machine a wall-clock bound would measure the machine, not gex
    console.log(
      `      while locked: slowest of 20 GETs ${Math.max(...latencies).toFixed(1)} ms, longest event-loop delay ${(loop.max / 1e6).toFixed(1)} ms`,
    );

    await holder.release();
    const written = await write;
    assert.equal(written.status, 200, written.text);
    assert.equal(written.body.version, 2);
    assert.deepEqual((await server.get(configsPath(config.id))).body.configuration, { n: 1 });
  });

  it('retries a single statement outside a transaction the same way: it waits, then runs once', async () => {
    server = await TestServer.start();
    holder = await LockHolder.start(server.location);
    const db = new SqliteDatabase(server.location);
    try {
      let settled = false;
      const write = db
        .run("UPDATE schema_migrations SET description = description || '!' WHERE version = 1")
        .finally(() => (settled = true));
      const read = await db.get<{ n: number }>('SELECT count(*) AS n FROM schema_migrations');
      assert.ok(read!.n >= 1);
      // the lock is still held: the read was not held up by the waiting write
      assert.equal(settled, false, 'a read on the same connection is answered while the write waits for the lock');
      await holder.release();
      assert.deepEqual(await write, { changes: 1 });
      const row = await db.get<{ description: string }>('SELECT description FROM schema_migrations WHERE version = 1');
      assert.match(row!.description, /[^!]!$/, 'applied exactly once');
    } finally {
      await db.close();
    }
  });

  it("gives up after the bound with 503 in Keboola's error shape and changes nothing", async () => {
    // an injected clock: each wait moves it on at once, so the 10 s bound passes in a moment
    let clock = 0;
    const waits: number[] = [];
    server = await TestServer.start({
      backend: sqliteWithBusy({
        maxWaitMs: 10_000,
        now: () => clock,
        sleep: async (ms) => {
          waits.push(ms);
          clock += ms;
          await new Promise((resolve) => setImmediate(resolve));
        },
      }),
    });
    const config = await server.createConfig({ name: 'Locked', configuration: { n: 0 } });
    holder = await LockHolder.start(server.location);

    const res = await server.put(configsPath(config.id), { json: { configuration: { n: 1 } } });
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.code, 'storage.databaseUnavailable');
    assert.equal(res.body.status, 'error');
    assert.match(res.body.exceptionId, /^exception-[0-9a-f]{32}$/);
    assert.match(res.body.error, /locked for 10 s/);
    assert.equal(
      waits.reduce((a, b) => a + b, 0),
      10_000,
      'waited exactly the bound, in growing steps',
    );
    assert.ok(waits[1] > waits[0], 'the waits back off');

    await holder.release();
    const after = await server.get(configsPath(config.id));
    assert.equal(after.body.version, 1, 'the refused write changed nothing');
    assert.deepEqual(after.body.configuration, { n: 0 });
  });
});
