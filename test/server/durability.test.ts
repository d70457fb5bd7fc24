import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { openEmbeddedStore } from '../support/open-store.js';
import { runGex } from '../support/cli.js';
import { sqliteBackend, TEST_KEY } from '../support/store.js';

/** `PRAGMA synchronous` on the store's own connection: 1 NORMAL, 2 FULL. */
async function synchronousOf(env: NodeJS.ProcessEnv): Promise<number> {
  const store = await sqliteBackend.fresh();
  try {
    const backend = await openEmbeddedStore(store.location, env);
    try {
      const row = await backend.db.get<{ synchronous: number }>('PRAGMA synchronous');
      return row!.synchronous;
    } finally {
      await backend.close();
    }
  } finally {
    await store.dispose();
  }
}

describe('SQLite durability (synchronous pragma)', () => {
  it('is FULL by default on a store opened as gex serve opens it: an acknowledged write is fsynced', async () => {
    assert.equal(await synchronousOf(TEST_KEY), 2);
  });

  it('is NORMAL when GEX_SQLITE_SYNCHRONOUS=normal asks for speed over durability', async () => {
    assert.equal(await synchronousOf({ ...TEST_KEY, GEX_SQLITE_SYNCHRONOUS: 'normal' }), 1);
    assert.equal(await synchronousOf({ ...TEST_KEY, GEX_SQLITE_SYNCHRONOUS: 'FULL' }), 2);
  });

  it('refuses a bad --durability or GEX_SQLITE_SYNCHRONOUS with exit 1 and one clear line, before creating the store', async () => {
    const store = await sqliteBackend.fresh();
    try {
      const byOption = await runGex(
        ['serve', '--port', '0', '--store', store.location, '--durability', 'off'],
        TEST_KEY,
      );
      assert.equal(byOption.code, 1, byOption.stderr);
      assert.match(byOption.stdout + byOption.stderr, /Invalid --durability "off": expected one of full, normal/);
      assert.doesNotMatch(byOption.stdout + byOption.stderr, /\n\s+at /, 'no stack trace');

      const byEnv = await runGex(['serve', '--port', '0', '--store', store.location], {
        ...TEST_KEY,
        GEX_SQLITE_SYNCHRONOUS: 'fastest',
      });
      assert.equal(byEnv.code, 1, byEnv.stderr);
      assert.match(
        byEnv.stdout + byEnv.stderr,
        /Invalid GEX_SQLITE_SYNCHRONOUS "fastest": expected one of full, normal/,
      );

      const byCli = await runGex(['tokens', 'create', '--description', 'x', '--store', store.location], {
        ...TEST_KEY,
        GEX_SQLITE_SYNCHRONOUS: 'fastest',
      });
      assert.equal(byCli.code, 1, byCli.stderr);
      assert.match(byCli.stdout + byCli.stderr, /Invalid GEX_SQLITE_SYNCHRONOUS "fastest"/);
      assert.equal(existsSync(store.location), false, 'no store file was created');
    } finally {
      await store.dispose();
    }
  });
});
