/**
 * `npm run test:files -- test/json/decode.test.ts [more files or folders] [-- mocha options]`: runs
 * only the named test files (sources or their built copies in dist/), after the build, with the
 * suite's settings (root hooks, timeout) and the spec reporter. mocha alone cannot: it adds the
 * files named on its command line to the configuration's `spec` and runs the whole suite.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `test/x.test.ts`, `dist/test/x.test.js` or a folder of either → what mocha runs, in dist/. */
function builtSpec(given: string): string {
  const relative = path.relative(root, path.resolve(given));
  if (relative.startsWith('..')) throw new Error(`${given} is not inside the project (${root})`);
  const inDist = relative.startsWith(`dist${path.sep}`) ? relative : path.join('dist', relative);
  const built = inDist.replace(/\.ts$/, '.js');
  const full = path.join(root, built);
  if (!existsSync(full)) throw new Error(`${given}: no built test at ${built} (is it a test file under test/?)`);
  return statSync(full).isDirectory() ? path.join(built, '**', '*.test.js') : built;
}

function main(argv: string[]): void {
  const split = argv.indexOf('--');
  const files = split === -1 ? argv : argv.slice(0, split);
  const options = split === -1 ? [] : argv.slice(split + 1);
  if (files.length === 0) {
    console.error('Name the test files to run: npm run test:files -- test/json/decode.test.ts [-- --grep text]');
    process.exit(1);
  }
  let specs: string[];
  try {
    specs = files.map(builtSpec);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
  const args = [
    mocha,
    '--no-config',
    '--require',
    'dist/test/support/root-hooks.js',
    '--timeout',
    '60000',
    '--reporter',
    'spec',
    ...options,
    ...specs,
  ];
  spawn(process.execPath, args, { cwd: root, stdio: 'inherit' }).on('close', (code, signal) =>
    process.exit(code ?? (signal ? 1 : 0)),
  );
}

main(process.argv.slice(2));
