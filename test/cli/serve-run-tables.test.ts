import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server/fixture-server.js';
import { runGex, startServe } from '../support/cli.js';
import { storeBackends, type FreshStore } from '../support/store.js';

const KEY = { GEX_MASTER_KEY: '42'.repeat(32) };

/**
 * The README's container recipe without Docker, every step a real process: `gex serve` on a store
 * named by GEX_STORE (the server's folder), and `gex run` in another folder that holds only
 * KBC_URL, KBC_TOKEN, KBC_CONFIGID and KBC_DATADIR (the image's run command) — its rows end in the
 * project's tables, read back through the server's API. SQLite, and PostgreSQL with GEX_TEST_POSTGRES.
 */
for (const factory of storeBackends())
  describe(`gex serve and gex run in separate folders: tables loaded through the API (${factory.name})`, function () {
    this.timeout(120_000);
    let api: FixtureServer;
    let answers: Record<string, unknown[]>;
    let store: FreshStore;
    let runDir: string;
    let served: { child: ChildProcess; url: string };
    let token: string;

    before(async () => {
      answers = {};
      api = await startFixtureServer({
        handler: (r) => {
          const name = new URL(r.url, 'http://x').pathname.replace('/api/', '');
          return name in answers ? { body: answers[name] } : undefined;
        },
      });
      store = await factory.fresh();
      runDir = await mkdtemp(path.join(os.tmpdir(), 'gex-run-folder-'));
      const created = await runGex(['tokens', 'create', '--description', 'runner', '--store', store.location], KEY);
      assert.equal(created.code, 0, created.stderr);
      token = created.stdout.trim();
      served = await startServe([], { ...KEY, GEX_STORE: store.location });
    });
    after(async () => {
      served?.child.kill('SIGTERM');
      await new Promise((resolve) =>
        served?.child.exitCode !== null ? resolve(null) : served.child.once('exit', resolve),
      );
      await api.close();
      await store.dispose();
      await rm(runDir, { recursive: true, force: true });
    });

    /** The server's answer to a GET with the runner's token. */
    async function get(urlPath: string, as = token): Promise<{ status: number; text: string }> {
      const answer = await fetch(`${served.url}/v2/storage/${urlPath}`, { headers: { 'X-StorageApi-Token': as } });
      return { status: answer.status, text: await answer.text() };
    }

    /** A configuration made over HTTP with `gex configs import`; returns its id. */
    async function importConfiguration(document: unknown): Promise<string> {
      const file = path.join(runDir, 'config.json');
      await writeFile(file, JSON.stringify(document));
      const result = await runGex(['configs', 'import', file, '--store', served.url, '--json'], { KBC_TOKEN: token });
      assert.equal(result.code, 0, result.stderr);
      await rm(file);
      return (JSON.parse(result.stdout) as { id: string }).id;
    }

    /** `gex run` as the image runs it: only the URL, the token, the configuration and the data folder. */
    const run = (configId: string, summary = path.join(runDir, 'summary.json')) =>
      runGex(
        ['run', '--summary', summary],
        {
          KBC_URL: served.url,
          KBC_TOKEN: token,
          KBC_CONFIGID: configId,
          KBC_DATADIR: path.join(runDir, `data-${configId}`),
          GEX_STORE: '',
          GEX_MASTER_KEY: '',
        },
        { cwd: runDir },
      );

    it("loads each row's tables before the next row: full, then incremental upserts by key; a row reads the table by input mapping", async () => {
      const configId = await importConfiguration({
        name: 'Shop',
        configuration: { parameters: { api: { baseUrl: `${api.url}/api/` }, config: { outputBucket: 'shop' } } },
        rows: [
          {
            rowId: 'a-users',
            configuration: {
              parameters: { config: { jobs: [{ endpoint: 'users' }] } },
              storage: {
                output: {
                  tables: [
                    { source: 'shop.users', destination: 'out.c-crm.users', incremental: true, primary_key: ['id'] },
                  ],
                },
              },
            },
          },
          {
            rowId: 'b-report',
            configuration: {
              parameters: { config: { jobs: [{ endpoint: 'report' }] } },
              storage: { input: { tables: [{ source: 'out.c-crm.users', destination: 'users.csv' }] } },
            },
          },
        ],
      });
      answers.users = [
        { id: 1, name: 'Ann' },
        { id: 2, name: 'Bob' },
      ];
      answers.report = [{ ok: 1 }];
      const first = await run(configId);
      assert.equal(first.code, 0, first.stdout + first.stderr);
      assert.match(first.stdout + first.stderr, /Tables are loaded into the project through the Storage API at http/);
      assert.match(first.stdout + first.stderr, /Loaded table out\.c-crm\.users: 2 rows \(incremental, key id\)/);
      assert.equal(
        await readFile(path.join(runDir, `data-${configId}/rows/b-report/in/tables/users.csv`), 'utf8'),
        '"id","name"\n"1","Ann"\n"2","Bob"\n',
        "row 2 read row 1's table, loaded before it started",
      );

      answers.users = [
        { id: 2, name: 'Bobby' },
        { id: 3, name: 'Cid' },
      ];
      const second = await run(configId);
      assert.equal(second.code, 0, second.stdout + second.stderr);
      const preview = await get('tables/out.c-crm.users/data-preview?limit=100');
      assert.equal(preview.status, 200, preview.text);
      const lines = preview.text.trim().split('\n').slice(1).sort();
      assert.deepEqual(lines, ['"1","Ann"', '"2","Bobby"', '"3","Cid"'], 'upserted by the key');
      const table = JSON.parse((await get('tables/out.c-crm.users')).text) as { primaryKey: string[] };
      assert.deepEqual(table.primaryKey, ['id']);
      const summary = JSON.parse(await readFile(path.join(runDir, 'summary.json'), 'utf8')) as {
        stateSaved: boolean;
        rows: Array<{ tables: Array<{ loaded: boolean; tableId?: string }> }>;
      };
      assert.equal(summary.stateSaved, true);
      assert.deepEqual(
        summary.rows[0].tables.map((t) => [t.loaded, t.tableId]),
        [[true, 'out.c-crm.users']],
      );
    });

    it("a failed import fails the run: no state saved, the earlier row's table stays", async () => {
      const configId = await importConfiguration({
        name: 'Conflict',
        configuration: { parameters: { api: { baseUrl: `${api.url}/api/` }, config: { outputBucket: 'conflict' } } },
        rows: [
          { rowId: 'a-orders', configuration: { parameters: { config: { jobs: [{ endpoint: 'orders' }] } } } },
          {
            rowId: 'b-users',
            configuration: {
              parameters: { config: { jobs: [{ endpoint: 'users' }] } },
              // the table has key id (the test above): a load asking for another key is refused by the import job
              storage: {
                output: {
                  tables: [{ source: 'conflict.users', destination: 'out.c-crm.users', primary_key: ['name'] }],
                },
              },
            },
          },
        ],
      });
      answers.orders = [{ id: 7 }];
      answers.users = [{ id: 9, name: 'Zed' }];
      const result = await run(configId, path.join(runDir, 'failed.json'));
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.match(
        result.stdout + result.stderr,
        /Cannot load out\/tables\/conflict\.users into the project: .*table "?out\.c-crm\.users"?.*has primary key id; the import asks for key name/,
      );
      const summary = JSON.parse(await readFile(path.join(runDir, 'failed.json'), 'utf8')) as { stateSaved: boolean };
      assert.equal(summary.stateSaved, false, 'no state saved');
      const config = JSON.parse(
        (await get(`branch/default/components/ex-generic-v2/configs/${configId}/rows/a-orders`)).text,
      ) as { state: unknown };
      assert.deepEqual(config.state, {}, "row 1's state not saved either");
      assert.equal((await get('tables/in.c-conflict.orders')).status, 200, "the first row's table stays");
      const kept = (await get('tables/out.c-crm.users/data-preview?limit=100')).text.trim().split('\n').slice(1).sort();
      assert.deepEqual(kept, ['"1","Ann"', '"2","Bobby"', '"3","Cid"'], 'the refused table is unchanged');
    });
  });
