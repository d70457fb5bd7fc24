import assert from 'node:assert/strict';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../src/common/errors.js';
import { DataFolderNotWritable, FolderGuard, UnsafeDataPath } from '../../src/extractor/folder-guard.js';
import { Outside, type PlantedLink } from '../support/outside.js';

/**
 * FolderGuard is what every write below a data folder goes through. Each operation is attacked with
 * a link planted at every position of its path (the folders leading to it and the target itself),
 * pointing to a folder outside, a file outside, or nowhere: each is refused with a UserError naming
 * the link, and nothing outside changes.
 */
describe('FolderGuard: no write below the data folder passes through a symbolic link', () => {
  let dir: string;
  let data: string;
  let outside: Outside;
  let guard: FolderGuard;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-folder-guard-'));
    data = path.join(dir, 'data');
    await mkdir(data);
    outside = new Outside(path.join(dir, 'outside'));
    await outside.create();
    guard = new FolderGuard(data);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** Every operation on `target` = data/a/b/c (or data/a/b/c as a folder). */
  const operations: Record<string, (target: string) => Promise<unknown>> = {
    mkdir: (t) => guard.mkdir(t),
    writeFile: (t) => guard.writeFile(t, 'gex wrote this'),
    createFile: async (t) => (await guard.createFile(t)).close(),
    remove: (t) => guard.remove(t),
    proveWritable: (t) => guard.proveWritable(t),
    'inspect (as a folder)': (t) => guard.inspect(t, 'folder'),
  };

  for (const [name, operation] of Object.entries(operations)) {
    for (const position of ['a', 'a/b', 'a/b/c']) {
      for (const kind of ['dir', 'file', 'dangling'] as PlantedLink[]) {
        it(`${name} of a/b/c refuses a link at ${position} to ${kind === 'dangling' ? 'nothing' : `a ${kind} outside`}`, async () => {
          const at = path.join(data, position);
          await mkdir(path.dirname(at), { recursive: true });
          await outside.plant(at, kind);
          const before = await outside.snapshot();
          await assert.rejects(operation(path.join(data, 'a/b/c')), (e: Error) => {
            assert.ok(e instanceof UnsafeDataPath, `${e.name}: ${e.message}`);
            assert.ok(e instanceof UserError);
            assert.ok(e.message.includes(`Refusing to use ${at}: it is a symbolic link`), e.message);
            return true;
          });
          assert.deepEqual(await outside.snapshot(), before, 'nothing outside changed');
          assert.ok((await lstat(at)).isSymbolicLink(), 'the link itself is left for the user to look at');
        });
      }
    }
  }

  it('the data folder itself may be a link (the user names it): writes go into its target', async () => {
    const real = path.join(dir, 'real');
    await mkdir(real);
    await symlink(real, path.join(dir, 'linked'));
    const linked = new FolderGuard(path.join(dir, 'linked'));
    await linked.writeFile(path.join(dir, 'linked', 'out', 'state.json'), '{}');
    assert.equal(await readFile(path.join(real, 'out', 'state.json'), 'utf8'), '{}');
  });

  it('refuses a target outside the data folder', async () => {
    for (const operation of Object.values(operations)) {
      await assert.rejects(operation(path.join(data, '..', 'outside', 'victim.txt')), /is not inside the data folder/);
    }
    await assert.rejects(guard.remove(data), /Refusing to remove the data folder itself/);
  });

  it('refuses a file where a folder is needed and a folder where a file is, naming it', async () => {
    await writeFile(path.join(data, 'a'), 'a file');
    await assert.rejects(
      guard.mkdir(path.join(data, 'a', 'b')),
      /Cannot use .*\/data\/a in the data folder: gex needs a folder there and it is a file/,
    );
    await mkdir(path.join(data, 'state.json'));
    await assert.rejects(
      guard.writeFile(path.join(data, 'state.json'), 'x'),
      /gex needs a file there and it is a folder/,
    );
  });

  it('writeFile replaces the file whole, leaving no temporary file; createFile starts a new, empty one', async () => {
    const file = path.join(data, 'in', 'state.json');
    await guard.writeFile(file, 'first');
    await guard.writeFile(file, 'second');
    assert.equal(await readFile(file, 'utf8'), 'second');
    const handle = await guard.createFile(file);
    await handle.close();
    assert.equal(await readFile(file, 'utf8'), '');
    assert.deepEqual(await readdir(path.join(data, 'in')), ['state.json']);
  });

  it('removes a folder with links inside it as links, never following them', async () => {
    await mkdir(path.join(data, 'rows', 'r'), { recursive: true });
    await outside.plant(path.join(data, 'rows', 'r', 'out'), 'dir');
    const before = await outside.snapshot();
    await guard.remove(path.join(data, 'rows', 'r'));
    assert.deepEqual(await readdir(path.join(data, 'rows')), []);
    assert.deepEqual(await outside.snapshot(), before);
  });

  it('proveWritable leaves no probe behind, and probes the nearest existing folder of one not made yet', async () => {
    await guard.proveWritable(path.join(data, 'rows', 'r', 'out'));
    assert.deepEqual(await readdir(data), []);
  });

  it('a folder that cannot be written is a DataFolderNotWritable naming it and the reason (not as root)', async function () {
    if (process.getuid?.() === 0) {
      // root writes anywhere: test/cli/run-checks-before-requests covers it as another user
      console.warn('    skipped as root (root writes anywhere): run-checks-before-requests covers it as another user');
      this.skip();
    }
    const locked = path.join(data, 'out');
    await mkdir(locked);
    await chmod(locked, 0o555);
    try {
      await assert.rejects(guard.proveWritable(locked), (e: Error) => {
        assert.ok(e instanceof DataFolderNotWritable);
        assert.match(
          e.message,
          /Cannot write in the folder .*\/data\/out \(permission denied, EACCES\)\. Make it writable for the user gex runs as/,
        );
        return true;
      });
    } finally {
      await chmod(locked, 0o755);
    }
  });
});
