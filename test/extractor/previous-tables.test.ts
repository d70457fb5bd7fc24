import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DataFolder } from '../../src/extractor/data-folder.js';
import { PreviousTables } from '../../src/extractor/previous-tables.js';
import { captureLogger } from '../support/extraction.js';

describe('PreviousTables: the tables of the run before, removed on a rerun', () => {
  let dir: string;
  let folder: DataFolder;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-previous-tables-'));
    folder = new DataFolder(path.join(dir, 'data'));
    await mkdir(folder.tablesDir, { recursive: true });
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('records each table and its manifest, and removes exactly those next time', async () => {
    const log = captureLogger();
    for (const name of ['b.users', 'b.users.manifest', 'other.csv']) await writeFile(folder.tableFile(name), 'x');
    await new PreviousTables(folder, log.logger).record(['b.users']);
    assert.deepEqual(JSON.parse(await readFile(path.join(folder.dir, '.gex-tables.json'), 'utf8')), {
      files: ['b.users', 'b.users.manifest'],
    });
    assert.deepEqual(await new PreviousTables(folder, log.logger).remove(), ['b.users', 'b.users.manifest']);
    assert.deepEqual(await readdir(folder.tablesDir), ['other.csv']);
  });

  it('writes its record over a planted link instead of through it, and does not read through one', async () => {
    const log = captureLogger();
    const victim = path.join(dir, 'victim.json');
    await writeFile(victim, '{"files":["keep"]}');
    const record = path.join(folder.dir, '.gex-tables.json');
    await symlink(victim, record);
    await writeFile(folder.tableFile('keep'), 'x');
    assert.deepEqual(await new PreviousTables(folder, log.logger).remove(), [], 'a record that is a link is not read');
    assert.match(log.text(), /Ignoring \.gex-tables\.json in the data folder/);
    await new PreviousTables(folder, log.logger).record(['t']);
    assert.equal(await readFile(victim, 'utf8'), '{"files":["keep"]}', 'the link target is untouched');
    assert.ok((await lstat(record)).isFile(), 'the link was replaced by the record');
  });

  it('ignores a record that is not its own shape, and keeps only plain file names of one that is', async () => {
    const log = captureLogger();
    const record = path.join(folder.dir, '.gex-tables.json');
    for (const text of ['not json', '{"files":"b.users"}', '[1,2]']) {
      await writeFile(record, text);
      assert.deepEqual(await new PreviousTables(folder, log.logger).remove(), []);
    }
    await writeFile(folder.tableFile('ok'), 'x');
    await mkdir(folder.tableFile('.gex-staging'));
    await writeFile(
      record,
      JSON.stringify({ files: ['../config.json', '/etc/passwd', '', '.', '..', 'a\u0000b', '.gex-staging', 42, 'ok'] }),
    );
    await writeFile(path.join(folder.dir, 'config.json'), '{}');
    assert.deepEqual(await new PreviousTables(folder, log.logger).remove(), ['ok']);
    assert.equal(await readFile(path.join(folder.dir, 'config.json'), 'utf8'), '{}');
    assert.ok((await lstat(folder.tableFile('.gex-staging'))).isDirectory());
  });
});
