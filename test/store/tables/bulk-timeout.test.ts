import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localToken } from '../../../src/store/embedded/tokens.js';
import { PostgresDatabase } from '../../../src/store/sql/postgres-database.js';
import { ProjectTables } from '../../../src/store/tables/index.js';
import { postgresBackend } from '../../support/store.js';

const factory = postgresBackend();

(factory ? describe : describe.skip)('a PostgreSQL table load and the statement timeout', function () {
  this.timeout(60_000);

  it('a load is not cut by the statement timeout (one COPY may take minutes); other statements still are', async () => {
    const { backend, location, dispose } = await factory!.open();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tables-timeout-'));
    // a timeout no statement of a real load could meet
    const db = new PostgresDatabase(location, { statementTimeoutMs: 1 });
    const projectId = (await localToken(backend.db, 'default')).projectId;
    try {
      await assert.rejects(db.run('SELECT pg_sleep(0.05)'), /statement timeout/);
      const file = path.join(dir, 'rows.csv');
      await writeFile(file, `id,v\n${Array.from({ length: 200_000 }, (_, i) => `${i},value ${i}`).join('\n')}\n`);
      const tables = new ProjectTables(db, projectId);
      assert.equal(
        (await tables.load(file, { destination: 'in.c-timeout.t', primary_key: ['id'] })).rowsInFile,
        200_000,
      );
      assert.equal((await new ProjectTables(backend.db, projectId).table('in.c-timeout.t')).rowsCount, 200_000);
    } finally {
      await db.close();
      const tables = new ProjectTables(backend.db, projectId);
      for (const b of await tables.listBuckets()) await tables.deleteBucket(b.id);
      await dispose();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
