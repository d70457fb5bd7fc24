/**
 * `npm start`: runs the bookshop fixture end to end — starts the project's fixture server with the
 * recorded API, prepares a data folder, runs `gex run --data-dir` and prints where the tables are.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFixtureServer } from '../src/fixture-server/fixture-server.js';
import { loadExchanges, replayExchanges } from '../src/fixture-server/recorded-exchanges.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixture = path.join(root, 'fixtures', 'bookshop');
const dataDir = path.join(root, '.gex', 'start', 'data');

const server = await startFixtureServer({ handler: replayExchanges(await loadExchanges(path.join(fixture, 'exchanges.json'))) });
try {
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(path.join(dataDir, 'in'), { recursive: true });
  const config = (await readFile(path.join(fixture, 'config.json'), 'utf8')).replaceAll('http://fixture-server', server.url);
  await writeFile(path.join(dataDir, 'config.json'), config);
  console.log(`Fixture API at ${server.url}; running: gex run --data-dir ${path.relative(process.cwd(), dataDir)}\n`);
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'bin', 'gex.js'), 'run', '--data-dir', dataDir], { stdio: 'inherit' });
    child.on('close', (c) => resolve(c ?? 2));
  });
  if (code !== 0) {
    console.error(`gex run failed with exit code ${code}`);
    process.exitCode = code;
  } else {
    const tablesDir = path.join(dataDir, 'out', 'tables');
    console.log(`\nRequests sent: ${server.requests.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    console.log(`\nOutput tables in ${tablesDir}:`);
    for (const file of (await readdir(tablesDir)).sort()) {
      if (file.endsWith('.manifest')) continue;
      const text = await readFile(path.join(tablesDir, file), 'utf8');
      console.log(`\n== ${file} (${text.split('\n').length - 2} rows)\n${text.trimEnd()}`);
    }
    console.log(`\nState: ${await readFile(path.join(dataDir, 'out', 'state.json'), 'utf8')}`);
  }
} finally {
  await server.close();
}
