import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationError, UserError } from '../../src/common/errors.js';
import { encodePathSegment } from '../../src/common/safe-path.js';
import { RunFolders } from '../../src/runner/run-folders.js';

describe('run folders: where rows run inside the data folder', () => {
  let dir: string;
  let dataDir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-run-folders-'));
    dataDir = path.join(dir, 'data');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('names a row folder rows/<encoded id>: readable ids as they are, anything else percent-encoded', () => {
    const folders = new RunFolders(dataDir);
    assert.equal(folders.row('users-2').relative, 'rows/users-2');
    assert.equal(folders.row('..').relative, 'rows/%2E%2E');
    assert.equal(folders.row('a/out/tables').relative, 'rows/a%2Fout%2Ftables');
    assert.equal(folders.row('../../victim').dir, path.join(dataDir, 'rows', '%2E%2E%2F%2E%2E%2Fvictim'));
    assert.equal(folders.root().relative, '.');
  });

  it('refuses a folder name that would leave rows/ or nest in it, before removing anything', async () => {
    await mkdir(path.join(dataDir, 'rows', 'x'), { recursive: true });
    await writeFile(path.join(dataDir, 'keep.txt'), 'kept');
    await writeFile(path.join(dataDir, 'rows', 'x', 'keep.txt'), 'kept');
    // a naming slip (not encodePathSegment) must still not let a recursive rm escape
    for (const slip of ['..', '.', 'x/..', '../..']) {
      const folders = new RunFolders(dataDir, () => slip);
      await assert.rejects(
        (async () => folders.prepare(folders.row('any')))(),
        (e: Error) => e instanceof ApplicationError || /leads outside/.test(e.message),
        slip,
      );
    }
    const nested = new RunFolders(dataDir, () => 'x/nested');
    await assert.rejects(nested.prepare(nested.row('any')), ApplicationError);
    assert.equal(await readFile(path.join(dataDir, 'keep.txt'), 'utf8'), 'kept');
    assert.equal(await readFile(path.join(dataDir, 'rows', 'x', 'keep.txt'), 'utf8'), 'kept');
  });

  it("refuses a second row whose folder is the first one's (a case-insensitive disk), leaving the first row's output", async () => {
    // a disk that folds case maps "A" and "a" to one folder; the folding encoder plays that disk
    const folders = new RunFolders(dataDir, (id) => encodePathSegment(id.toLowerCase()));
    const first = folders.row('A');
    await folders.prepare(first);
    await writeFile(path.join(first.dir, 'out', 'tables', 't'), 'first row');
    await assert.rejects(folders.prepare(folders.row('a')), (e: Error) => {
      assert.ok(e instanceof UserError);
      assert.match(e.message, /Rows A and a would share the folder rows\/a/);
      return true;
    });
    assert.equal(await readFile(path.join(first.dir, 'out', 'tables', 't'), 'utf8'), 'first row');
  });

  it('a folder left by an earlier run is emptied; the configuration without rows only loses out/', async () => {
    const folders = new RunFolders(dataDir);
    await mkdir(path.join(dataDir, 'rows', 'r', 'out', 'tables'), { recursive: true });
    await writeFile(path.join(dataDir, 'rows', 'r', 'out', 'tables', 'old'), 'old');
    await folders.prepare(folders.row('r'));
    assert.deepEqual(await readdir(path.join(dataDir, 'rows', 'r', 'out', 'tables')), []);
    await writeFile(path.join(dataDir, 'config.json'), '{}');
    await folders.prepare(folders.root());
    assert.equal(await readFile(path.join(dataDir, 'config.json'), 'utf8'), '{}');
  });

  it("confirms a unit's tables are on disk, and fails naming the ones that are gone", async () => {
    const folders = new RunFolders(dataDir);
    const folder = folders.row('r');
    await folders.prepare(folder);
    await writeFile(path.join(folder.dir, 'out', 'tables', 'b.users'), 'x');
    await folders.confirmTables(folder, ['b.users']);
    await assert.rejects(
      folders.confirmTables(folder, ['b.users', 'b.orders']),
      /The tables of row r are gone from rows\/r\/out\/tables \(b\.orders\)/,
    );
  });
});
