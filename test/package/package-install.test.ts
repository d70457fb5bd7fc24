import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startFixtureServer } from '../support/fixture-server/fixture-server.js';
import { repoRoot } from '../support/cli.js';

const exec = promisify(execFile);

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  files: string[];
  scripts: Record<string, string>;
}

/**
 * SLOW (about a minute: npm installs the dependencies and builds the SQLite addon): the package
 * as a user gets it — `npm pack`, `npm i -g <tarball>` into a temporary prefix, then the
 * installed `gex` command. Needs the npm registry (or npm's cache).
 */
describe('gex package: npm pack, install from the tarball into a temporary prefix, run (SLOW, ~1 min)', function () {
  this.timeout(10 * 60 * 1000);
  let dir: string;
  let pkg: PackageJson;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-pack-'));
    pkg = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as PackageJson;
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('cannot be published to the npm registry (the name gex is another package) and builds before packing', () => {
    assert.equal(pkg.private, true);
    assert.equal(pkg.scripts.prepack, 'npm run build');
  });

  it('packs the bundle, the entry, README, docs and LICENSE only, and the installed gex runs', async () => {
    // the tests run from a fresh build, so the prepack build is skipped here
    await exec('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: repoRoot });
    const tarball = path.join(dir, `gex-${pkg.version}.tgz`);
    const listing = (await exec('tar', ['-tzf', tarball])).stdout.split('\n').filter(Boolean);
    assert.ok(listing.includes('package/bin/gex.js'));
    assert.ok(listing.includes('package/dist/bundle/main.js'));
    assert.ok(listing.includes('package/dist/bundle/form-parser-worker.js'));
    assert.ok(listing.includes('package/dist/bundle/sqlite-write-worker.js'));
    assert.ok(listing.includes('package/README.md') && listing.includes('package/LICENSE'));
    // the README's links into docs/ resolve in an installed package too
    assert.ok(listing.includes('package/docs/cli.md'));
    assert.deepEqual(
      listing.filter(
        (f) => /^package\/(src|test|bench|fixtures|dist\/src|dist\/test)\//.test(f) || /\.sqlite|\.key$/.test(f),
      ),
      [],
    );

    const prefix = path.join(dir, 'prefix');
    await exec(
      'npm',
      ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', tarball],
      { cwd: dir },
    );
    const gex = path.join(prefix, 'bin', 'gex');

    for (const flag of ['--version', '-V']) assert.equal((await exec(gex, [flag])).stdout, `${pkg.version}\n`);

    // a data-folder run of the installed command, against a local API
    const server = await startFixtureServer({
      handler: (r) => (r.url.startsWith('/v1/things') ? { body: { items: [{ id: 1, name: 'a' }] } } : undefined),
    });
    try {
      const data = path.join(dir, 'data');
      await mkdir(data);
      await writeFile(
        path.join(data, 'config.json'),
        JSON.stringify({
          parameters: {
            api: { baseUrl: `${server.url}/v1/` },
            config: { outputBucket: 'pkg', jobs: [{ endpoint: 'things', dataField: 'items' }] },
          },
        }),
      );
      await exec(gex, ['run', '--data-dir', data], { cwd: dir });
      assert.equal(await readFile(path.join(data, 'out', 'tables', 'pkg.things'), 'utf8'), '"id","name"\n"1","a"\n');
    } finally {
      await server.close();
    }
    // the native SQLite addon works in the installed package
    const created = await exec(
      gex,
      ['tokens', 'create', '--description', 'installed', '--store', path.join(dir, 'store.sqlite')],
      { cwd: dir },
    );
    assert.match(created.stdout, /^\d+-\d+-[\w-]{40}\n$/);
    assert.ok((await readdir(dir)).includes('store.sqlite'));
  });
});
