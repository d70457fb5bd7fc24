import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ProjectTables } from '../../src/store/tables/index.js';
import { describeEachBackend, useTestServer } from '../support/storage-api-server.js';
import { StoreCli } from '../support/store-cli.js';

/**
 * `gex tables` against a real `gex serve`: the remote client (Keboola's table API) and the
 * server's routes built for it agree — list, show, preview filters, export, deletes.
 */
describeEachBackend('gex tables against gex serve', (backend) => {
  const server = useTestServer({ backend });
  let dir: string;
  let cli: StoreCli;
  let tables: ProjectTables;
  let project = 0;

  beforeEach(async () => {
    const token = await server().createToken({ project: `tables-cli-${++project}` });
    const info = await server().backend.authenticate(token);
    tables = new ProjectTables(server().backend.db, info!.projectId);
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tables-serve-'));
    const file = path.join(dir, 'users.csv');
    await writeFile(file, 'id,name,country\n1,Ann,CZ\n2,"Bob ""B""",SK\n3,"line\nbreak",DE\n');
    await tables.load(file, { destination: 'in.c-shop.users', primary_key: ['id'] });
    cli = new StoreCli({ KBC_URL: server().baseUrl, KBC_TOKEN: token, GEX_STORE: '' }, dir);
  });
  afterEach(async () => {
    for (const b of await tables.listBuckets()) await tables.deleteBucket(b.id);
    await rm(dir, { recursive: true, force: true });
  });

  it('lists, shows, previews with filters and exports what the server holds', async () => {
    const list = await cli.json(['tables', 'list']);
    assert.deepEqual(
      list.map((t: { id: string; rowsCount: number; primaryKey: string[] }) => [t.id, t.rowsCount, t.primaryKey]),
      [['in.c-shop.users', 3, ['id']]],
    );
    const shown = await cli.json(['tables', 'show', 'in.c-shop.users']);
    assert.deepEqual(shown.columns, ['id', 'name', 'country']);
    const preview = await cli.json([
      'tables',
      'preview',
      'in.c-shop.users',
      '--columns',
      'name',
      '--where-column',
      'country',
      '--where-values',
      'CZ,SK',
    ]);
    assert.deepEqual(preview, { columns: ['name'], rows: [['Ann'], ['Bob "B"']] });
    const changed = await cli.json([
      'tables',
      'preview',
      'in.c-shop.users',
      '--where-column',
      'country',
      '--where-values',
      'CZ',
      '--where-operator',
      'ne',
      '--changed-since',
      '-1 days',
    ]);
    assert.deepEqual(
      changed.rows.map((r: string[]) => r[0]),
      ['2', '3'],
    );
    await cli.ok(['tables', 'export', 'in.c-shop.users', '--output', 'out.csv']);
    assert.equal(
      await readFile(path.join(dir, 'out.csv'), 'utf8'),
      '"id","name","country"\n"1","Ann","CZ"\n"2","Bob ""B""","SK"\n"3","line\nbreak","DE"\n',
    );
    const manifest = JSON.parse(await readFile(path.join(dir, 'out.csv.manifest'), 'utf8'));
    assert.deepEqual([manifest.id, manifest.primary_key, manifest.rows_count], ['in.c-shop.users', ['id'], 3]);
  });

  it('deletes a table; a bucket with tables only with --force; unknown ids fail naming them', async () => {
    assert.match(await cli.fails(['tables', 'show', 'in.c-shop.nope']), /in\.c-shop\.nope/);
    assert.match(await cli.fails(['tables', 'delete', '--bucket', 'in.c-shop']), /--force/);
    assert.equal((await tables.listTables()).length, 1);
    await cli.ok(['tables', 'delete', '--bucket', 'in.c-shop', '--force']);
    assert.deepEqual(await tables.listBuckets(), []);
  });
});
