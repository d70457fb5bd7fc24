import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../src/common/errors.js';
import { createSqliteStoreFile, inspectSqliteStore } from '../../src/store/sqlite-file.js';
import { checkStoreScheme } from '../../src/store/store-location.js';

describe('store locations', () => {
  it('accepts file paths, postgres:// and http(s):// and refuses other URL schemes, hiding passwords', () => {
    for (const ok of [
      'store.sqlite',
      '/data/gex.sqlite',
      'C:\\data\\gex.sqlite',
      'postgres://h/db',
      'POSTGRESQL://h/db',
      'https://x',
      'http://x',
    ])
      checkStoreScheme(ok);
    assert.throws(() => checkStoreScheme('htp://x'), /unknown URL scheme "htp:\/\/": expected a SQLite file path/);
    assert.throws(
      () => checkStoreScheme('mysql://u:secret@db/gex'),
      (e: unknown) =>
        e instanceof UserError && e.message.includes('"mysql://u:***@db/gex"') && !e.message.includes('secret'),
    );
  });

  describe('SQLite store files', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-sqlite-file-'));
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));

    it('tells a new store from an existing one, and refuses folders, other files and missing folders', async () => {
      assert.deepEqual(await inspectSqliteStore(path.join(dir, 'new.sqlite'), { mustExist: false }), { exists: false });
      await assert.rejects(
        inspectSqliteStore(path.join(dir, 'new.sqlite'), { mustExist: true }),
        /No store at .*new\.sqlite: this command only reads/,
      );
      await assert.rejects(inspectSqliteStore(dir, { mustExist: false }), /is a folder: expected a SQLite file path/);
      await assert.rejects(
        inspectSqliteStore(path.join(dir, 'no', 'x.sqlite'), { mustExist: false }),
        /the folder .*no does not exist/,
      );
      await writeFile(path.join(dir, 'text'), 'SQLite format 2 but not really');
      await assert.rejects(
        inspectSqliteStore(path.join(dir, 'text'), { mustExist: false }),
        /is not a SQLite database/,
      );
      await writeFile(path.join(dir, 'empty'), '');
      assert.deepEqual(await inspectSqliteStore(path.join(dir, 'empty'), { mustExist: false }), { exists: false });
      await assert.rejects(
        inspectSqliteStore(path.join(dir, 'empty'), { mustExist: true }),
        /No store at .*empty \(the file is empty\)/,
      );
      await writeFile(
        path.join(dir, 'db'),
        Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), Buffer.alloc(84)]),
      );
      assert.deepEqual(await inspectSqliteStore(path.join(dir, 'db'), { mustExist: true }), { exists: true });
    });

    it('creates the database file 0600 even under a permissive umask, and keeps a file that exists', async () => {
      const previous = process.umask(0);
      try {
        await createSqliteStoreFile(path.join(dir, 'a.sqlite'));
        assert.equal((await stat(path.join(dir, 'a.sqlite'))).mode & 0o777, 0o600);
        await writeFile(path.join(dir, 'b.sqlite'), 'x', { mode: 0o640 });
        await createSqliteStoreFile(path.join(dir, 'b.sqlite'));
        assert.equal((await stat(path.join(dir, 'b.sqlite'))).mode & 0o777, 0o640);
        assert.deepEqual((await readdir(dir)).sort(), ['a.sqlite', 'b.sqlite']);
      } finally {
        process.umask(previous);
      }
    });
  });
});
