/**
 * `npm start`: the main job on the embedded default. Starts the project's fixture server with the
 * recorded bookshop API, loads a configuration with three rows (one disabled, an explicit
 * rowsSortOrder, a page-size override in one row) into a local SQLite store, runs it by config id
 * with `gex run --config-id`, then prints the tables written (as files and as loaded into the
 * store's Storage tables) and the states saved.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodePathSegment } from '../src/common/safe-path.js';
import { startFixtureServer } from '../test/support/fixture-server/fixture-server.js';
import { loadExchanges, replayExchanges } from '../test/support/fixture-server/recorded-exchanges.js';
import { decodeJson, stringifyExact } from '../src/json/index.js';
import { builtinComponents, GENERIC_EXTRACTOR_ID } from '../src/cli/builtin-components.js';
import { importConfiguration } from '../src/store/import-configuration.js';
import { openEmbeddedStore } from '../src/store/open-store.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const fixture = path.join(root, 'fixtures', 'bookshop');
const work = path.join(root, '.gex', 'start');
const storeFile = path.join(work, 'store.sqlite');
const dataDir = path.join(work, 'data');
const rel = (p: string) => path.relative(process.cwd(), p);

function gex(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    spawn(process.execPath, [path.join(root, 'bin', 'gex.js'), ...args], { stdio: 'inherit' }).on('close', (code) =>
      resolve(code ?? 2),
    );
  });
}

const server = await startFixtureServer({
  handler: replayExchanges(await loadExchanges(path.join(fixture, 'exchanges.json'))),
});
try {
  await rm(work, { recursive: true, force: true });
  // the store's folder must exist: gex creates a store file, never the folders leading to it
  await mkdir(work, { recursive: true });
  const document = decodeJson(
    (await readFile(path.join(fixture, 'stored-configuration.json'), 'utf8')).replaceAll(
      'http://fixture-server',
      server.url,
    ),
  );
  const backend = await openEmbeddedStore(storeFile, process.env, { builtinComponents: builtinComponents() });
  const configuration = await importConfiguration(await backend.localSession(), GENERIC_EXTRACTOR_ID, document);
  await backend.close();
  console.log(
    `Fixture API at ${server.url}. Stored configuration ${configuration.id} "${configuration.name}" in ${rel(storeFile)}:`,
  );
  for (const row of configuration.rows)
    console.log(`  row ${row.id} "${row.name}"${row.isDisabled ? ' (disabled)' : ''}`);
  console.log(`\n$ gex run --config-id ${configuration.id} --store ${rel(storeFile)} --data-dir ${rel(dataDir)}\n`);

  const code = await gex([
    'run',
    '--config-id',
    configuration.id,
    '--store',
    storeFile,
    '--data-dir',
    dataDir,
    '--summary',
    path.join(work, 'summary.json'),
  ]);
  if (code !== 0) {
    console.error(`gex run failed with exit code ${code}`);
    process.exitCode = code;
  } else {
    console.log(`\nRequests sent: ${server.requests.map((r) => `${r.method} ${r.url}`).join(', ')}`);
    for (const row of configuration.rows.filter((r) => !r.isDisabled)) {
      // a row runs in rows/<its id encoded as one path segment>
      const tables = path.join(dataDir, 'rows', encodePathSegment(row.id), 'out', 'tables');
      for (const file of (await readdir(tables)).sort().filter((f) => !f.endsWith('.manifest'))) {
        console.log(
          `\n== ${rel(path.join(tables, file))}\n${(await readFile(path.join(tables, file), 'utf8')).trimEnd()}`,
        );
      }
    }
    console.log(
      `\n$ gex tables list --store ${rel(storeFile)}   # the same tables, loaded into the store's database\n`,
    );
    await gex(['tables', 'list', '--store', storeFile]);
    const after = await openEmbeddedStore(storeFile, process.env, { builtinComponents: builtinComponents() });
    const saved = await (await after.localSession()).getConfiguration(GENERIC_EXTRACTOR_ID, configuration.id);
    await after.close();
    console.log('\nStates saved in the store:');
    for (const row of saved.rows) {
      const component = row.state instanceof Map ? row.state.get('component') : undefined;
      const time = component instanceof Map ? component.get('time') : undefined;
      console.log(
        `  row ${row.id}: ${time === undefined ? '{} (never run)' : `component.time = ${stringifyExact(time)}`}`,
      );
    }
    console.log(`\nSummary: ${rel(path.join(work, 'summary.json'))}`);
  }
} finally {
  await server.close();
}
