import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gexBin, repoRoot } from '../support/cli.js';

/** The modules a `gex` process loads, recorded by test/support/record-imports.mjs. */
async function importsOf(args: string[]): Promise<{ code: number; stderr: string; urls: string[] }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-imports-'));
  const record = path.join(dir, 'imports.txt');
  await writeFile(record, '');
  try {
    const child = spawn(
      process.execPath,
      [
        '--import',
        path.join(repoRoot, 'test', 'support', 'record-imports.mjs'),
        gexBin,
        ...args.map((a) => a.replace('$DIR', dir)),
      ],
      {
        env: { ...process.env, GEX_RECORD_IMPORTS: record },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
    return { code, stderr, urls: (await readFile(record, 'utf8')).split('\n').filter(Boolean) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// A silent fallback (bin/gex.js to the module tree, validate.js to compiling the schema with ajv)
// would keep every other test green and only cost start-up time: this pins down what really loads.
describe('gex binary: the bundled build', () => {
  it('runs from dist/bundle with the precompiled validator, not the module tree or the ajv compiler', async function () {
    this.timeout(20000);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gex-bundle-'));
    try {
      // an invalid configuration: validated, then refused with exit 1
      await writeFile(
        path.join(dataDir, 'config.json'),
        JSON.stringify({ parameters: { api: { baseUrl: 'http://127.0.0.1:9/' }, config: { jobs: [] } } }),
      );
      const { code, stderr, urls } = await importsOf(['run', '--data-dir', dataDir]);
      assert.equal(code, 1, stderr);
      assert.match(stderr, /jobs/);
      const own = urls.filter((u) => u.startsWith('file:') && !u.includes('/node_modules/'));
      assert.ok(
        own.some((u) => u.endsWith('/dist/bundle/main.js')),
        `the bundle was not loaded:\n${own.join('\n')}`,
      );
      assert.ok(
        own.some((u) => u.endsWith('/dist/bundle/parameters-validator.generated.js')),
        'the precompiled validator was not loaded',
      );
      assert.deepEqual(
        own.filter((u) => u.includes('/dist/src/')),
        [],
        'modules of the unbundled tree were loaded',
      );
      assert.deepEqual(
        urls.filter((u) => /\/node_modules\/ajv\/dist\/ajv\.js$/.test(u)),
        [],
        'ajv was loaded to compile the schema',
      );
      // commands are imported when named: a run compiles none of the others, nor what only they use
      const loaded = await Promise.all(own.map((u) => readFile(new URL(u), 'utf8')));
      for (const [text, what] of [
        ['Serve the configuration store over HTTP', 'the serve command'],
        ['Run configurations on a cron', 'the schedules command'],
        ['Invalid cron expression', 'the cron parser'],
      ]) {
        assert.ok(!loaded.some((code) => code.includes(text)), `a run loaded ${what}`);
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
