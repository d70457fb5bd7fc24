import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { YOUNG_GENERATION_BYTES } from '../../src/common/heap-growth.js';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { flatRecord, pagedApi } from '../support/fixture-server/paged-api.js';
import { gexBin, repoRoot } from '../support/cli.js';

interface Probe {
  code: number;
  stderr: string;
  maxNewSpaceBytes: number;
  listFormats: number;
  /** the files of dist/bundle the process loaded */
  bundleFiles: string[];
}

/** Records with child tables, enough pages that V8 would grow its young generation to the full 32 MB. */
const PAGES = 150;
const nested = (i: number) => ({
  ...flatRecord(i),
  owner: { id: i % 7, address: { city: 'Prague' } },
  tags: ['a', `t${i % 7}`],
});

/** `gex run` (the real binary) with node flags, watched by test/support/heap-probe.mjs and record-imports.mjs. */
async function probedRun(dataDir: string, nodeFlags: string[] = []): Promise<Probe> {
  const probeFile = path.join(dataDir, 'probe.json');
  const importsFile = path.join(dataDir, 'imports.txt');
  await writeFile(importsFile, '');
  const support = path.join(repoRoot, 'test', 'support');
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      '--import',
      path.join(support, 'heap-probe.mjs'),
      '--import',
      path.join(support, 'record-imports.mjs'),
      gexBin,
      'run',
      '--data-dir',
      dataDir,
      '--log-level',
      'error',
    ],
    {
      env: { ...process.env, NODE_OPTIONS: '', GEX_HEAP_PROBE: probeFile, GEX_RECORD_IMPORTS: importsFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  const probe = JSON.parse(await readFile(probeFile, 'utf8')) as { maxNewSpaceBytes: number; listFormats: number };
  const bundle = `${path.join(repoRoot, 'dist', 'bundle')}/`;
  const bundleFiles = (await readFile(importsFile, 'utf8'))
    .split('\n')
    .filter((url) => url.startsWith(`file://${bundle}`))
    .map((url) => new URL(url).pathname);
  return { code, stderr, ...probe, bundleFiles };
}

describe('gex run: memory settings of the process', function () {
  this.timeout(120000);
  let server: FixtureServer;
  let dataDir: string;

  before(async () => {
    server = await startFixtureServer({
      handler: pagedApi({ pages: PAGES, recordsPerPage: 100, record: nested }),
      record: false,
    });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gex-run-memory-'));
    await mkdir(path.join(dataDir, 'in'), { recursive: true });
    const config = {
      parameters: {
        api: { baseUrl: `${server.url}/`, pagination: { method: 'pagenum', limit: 100 } },
        config: { outputBucket: 'bench', jobs: [{ endpoint: 'items', dataField: 'items' }] },
      },
    };
    await writeFile(path.join(dataDir, 'config.json'), JSON.stringify(config));
  });

  after(async () => {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("caps V8's young generation at 8 MB (V8 alone grows it to 32 MB), and the user's node flag wins", async () => {
    const capped = await probedRun(dataDir);
    assert.equal(capped.code, 0, capped.stderr);
    assert.deepEqual(
      (await readdir(path.join(dataDir, 'out', 'tables'))).filter((f) => !f.endsWith('.manifest')).sort(),
      ['bench.items', 'bench.items_tags'],
    );
    // V8 reports a little over the two semi-spaces
    assert.ok(
      capped.maxNewSpaceBytes <= YOUNG_GENERATION_BYTES + 1024 * 1024,
      `new space grew to ${capped.maxNewSpaceBytes} bytes`,
    );

    // the same run with the user's own size: gex leaves it alone, and the run is big enough to grow it
    const own = await probedRun(dataDir, ['--max-semi-space-size=16']);
    assert.equal(own.code, 0, own.stderr);
    assert.ok(
      own.maxNewSpaceBytes > 2 * YOUNG_GENERATION_BYTES,
      `new space only grew to ${own.maxNewSpaceBytes} bytes`,
    );
  });

  it("loads neither AWS's signer nor got's list formatters when nothing needs them", async () => {
    const run = await probedRun(dataDir);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(run.bundleFiles.length > 5, `too few bundle files recorded: ${run.bundleFiles.join(', ')}`);
    for (const file of run.bundleFiles) {
      assert.doesNotMatch(
        await readFile(file, 'utf8'),
        /node_modules\/@smithy\//,
        `${path.basename(file)} holds AWS's signer`,
      );
    }
    assert.equal(run.listFormats, 0);
  });
});
