import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGex, startServe } from '../support/cli.js';
import { helpTree } from '../support/cli-help.js';
import { runGexInProcess } from '../support/in-process-gex.js';

const KEY = { GEX_MASTER_KEY: '66'.repeat(32) };
const WRONG = 'wrong-token-0123456789abcdef';

/**
 * A token a server refuses gets one wording from every command that sends one — configs, rows,
 * state, tables, components, jobs, schedules, notifications, run, check — naming the server and where the token
 * came from (`--token`, `KBC_TOKEN`), never the token. Every command whose help lists --token is
 * tried: one added later must be added here.
 */
describe('gex: a refused token, the same words from every command', function () {
  this.timeout(300_000);
  let dir: string;
  let served: Awaited<ReturnType<typeof startServe>>;
  let store: string;

  /** each command that takes --token, with arguments that reach the server (nothing is refused before) */
  const lines: Record<string, string[]> = {
    'configs list': [],
    'configs get': ['shop'],
    'configs versions': ['shop'],
    'configs diff': ['shop', '1'],
    'configs export': ['shop'],
    'configs create': ['--name', 'x'],
    'configs edit': ['shop', '--name', 'y'],
    'configs rollback': ['shop', '1'],
    'configs copy': ['shop', '1', '--name', 'z'],
    'configs import': ['IMPORT_FILE'],
    'configs delete': ['shop'],
    'configs restore': ['shop'],
    'configs purge': ['shop', '--yes'],
    'configs state-reset': ['shop'],
    'rows list': ['shop'],
    'rows add': ['shop'],
    'rows edit': ['shop', '--row-id', 'r', '--name', 'n'],
    'rows remove': ['shop', '--row-id', 'r'],
    'rows enable': ['shop', '--row-id', 'r'],
    'rows disable': ['shop', '--row-id', 'r'],
    'rows move': ['shop', 'r', '--first'],
    'state show': ['shop'],
    'state reset': ['shop'],
    'components list': [],
    'components show': ['ex-generic-v2'],
    'tables list': [],
    'tables show': ['in.c-a.b'],
    'tables preview': ['in.c-a.b'],
    'tables export': ['in.c-a.b', '--output', '-'],
    'tables import': ['CSV_FILE', '--table', 'in.c-a.b'],
    'tables delete': ['in.c-a.b'],
    'jobs run': ['shop'],
    'jobs list': [],
    'flows show': ['1'],
    'jobs show': ['1'],
    'jobs log': ['1'],
    'jobs kill': ['1'],
    'schedules add': ['shop', '--cron', '0 * * * *'],
    'schedules list': [],
    'schedules enable': ['1'],
    'schedules disable': ['1'],
    'schedules remove': ['1'],
    'notifications add': ['--event', 'job-failed', '--email', 'ops@example.com'],
    'notifications list': [],
    'notifications remove': ['1'],
    'notifications test': ['1'],
    'notifications deliveries': [],
    run: ['--config-id', 'shop'],
    check: ['--config-id', 'shop'],
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-refused-token-'));
    store = path.join(dir, 'store.sqlite');
    const made = await runGex(['tokens', 'create', '--description', 'a', '--store', store], KEY);
    assert.equal(made.code, 0, made.stderr);
    served = await startServe(['--store', store, '--workers', '0'], KEY);
    await writeFile(
      path.join(dir, 'import.json'),
      JSON.stringify({ name: 'i', configurationId: 'i', configuration: {} }),
    );
    await writeFile(path.join(dir, 'table.csv'), 'id\n1\n');
  });
  after(async () => {
    served?.child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  });

  const argsOf = (command: string) => [
    ...command.split(' '),
    ...lines[command].map((a) =>
      a === 'IMPORT_FILE' ? path.join(dir, 'import.json') : a === 'CSV_FILE' ? path.join(dir, 'table.csv') : a,
    ),
  ];
  /** the message of the line that says what went wrong, whatever the command's way of printing it */
  const message = (stderr: string) =>
    stderr
      .split('\n')
      .map((l) => l.replace(/^\d\d:\d\d:\d\d\.\d{3} ERROR +/, '').replace(/^Error: /, ''))
      .find((l) => /token/.test(l));

  it('tries every command that takes --token', async () => {
    const taking = (await helpTree())
      .filter((c) => c.subcommands.length === 0 && c.options.some((o) => o.name === 'token'))
      .map((c) => c.path.join(' '));
    assert.deepEqual(taking.sort(), Object.keys(lines).sort());
  });

  it('from KBC_TOKEN and from --token: which server, which source, exit 1, never the token', async () => {
    for (const command of Object.keys(lines)) {
      const env = { GEX_STORE: '', GEX_MASTER_KEY: '', KBC_URL: served.url, KBC_DATADIR: path.join(dir, 'data') };
      for (const [origin, r] of [
        ['KBC_TOKEN', await runGexInProcess(argsOf(command), { ...env, KBC_TOKEN: WRONG }, { cwd: dir })],
        [
          '--token',
          await runGexInProcess([...argsOf(command), '--token', WRONG], { ...env, KBC_TOKEN: '' }, { cwd: dir }),
        ],
      ] as const) {
        assert.equal(r.code, 1, `${command} (${origin}): ${r.output}`);
        assert.match(
          message(r.stderr) ?? r.output,
          new RegExp(
            // (an import says the step it was at first, and that nothing was imported)
            `^(Import failed at creating the configuration: )?The (Storage|Job Queue|Scheduler|Notification) API at ${served.url.replace(/[.:/]/g, '\\$&')} refused the token from ${origin}: ` +
              'Invalid access token \\[storage\\.tokenInvalid\\]\\. Pass a valid token with --token \\(or set KBC_TOKEN\\)\\.( Nothing was imported\\.)?$',
          ),
          `${command} (${origin})`,
        );
        assert.ok(!r.output.includes(WRONG), `${command}: the token is not shown`);
      }
    }
  });

  it('no token for a server, and a token the embedded store does not know: the same words', async () => {
    const none = await runGexInProcess(['configs', 'list'], { GEX_STORE: '', KBC_URL: served.url, KBC_TOKEN: '' });
    assert.equal(none.code, 1);
    assert.equal(
      none.stderr,
      `Error: The Storage API at ${served.url} needs a token: none was given. Pass a valid token with --token (or set KBC_TOKEN).\n`,
    );
    const jobs = await runGexInProcess(['jobs', 'list'], { GEX_STORE: '', KBC_URL: served.url, KBC_TOKEN: '' });
    assert.equal(message(jobs.stderr), message(none.stderr));
    const embedded = await runGexInProcess(['configs', 'list', '--store', store, '--token', WRONG], {
      ...KEY,
      KBC_URL: '',
    });
    assert.equal(embedded.code, 1);
    assert.equal(
      message(embedded.stderr),
      `The store ${store} refused the token from --token: Invalid access token. Pass a valid token with --token (or set KBC_TOKEN).`,
    );
  });
});
