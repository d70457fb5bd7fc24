import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { printList } from '../../src/cli/output/list-output.js';
import { helpTree } from '../support/cli-help.js';
import { runGexInProcess } from '../support/in-process-gex.js';
import { TEST_KEY } from '../support/store.js';
import { startGexInTerminal } from '../support/terminal.js';
import { ttySink } from '../support/tty-sink.js';

/**
 * Every list command prints a header row on a terminal, its columns aligned under it; piped, the
 * same rows stay tab-separated lines without a header (what scripts read).
 */
describe('gex lists: a header row on a terminal, plain lines in a pipe', function () {
  this.timeout(120_000);

  it('printList: header and aligned columns on a terminal; the cells joined by the separator otherwise', () => {
    const rows = [
      ['shop', 'Shop', 'version 3'],
      ['a-much-longer-id', 'B', 'version 12, 2 rows (0 disabled)'],
    ];
    const tty = ttySink();
    printList(['ID', 'NAME', 'VERSION'], rows, { out: tty.stream });
    assert.equal(
      tty.text(),
      'ID                NAME  VERSION\n' +
        'shop              Shop  version 3\n' +
        'a-much-longer-id  B     version 12, 2 rows (0 disabled)\n',
    );
    const piped: string[] = [];
    printList(['ID', 'NAME', 'VERSION'], rows, { out: { write: (t: string) => piped.push(t) } });
    assert.deepEqual(piped, ['shop\tShop\tversion 3\n', 'a-much-longer-id\tB\tversion 12, 2 rows (0 disabled)\n']);
    // a very long cell is not padded to: the other rows stay readable; no trailing blanks
    const wide = ttySink();
    printList(
      ['ID', 'NAME'],
      [
        ['x'.repeat(200), 'a'],
        ['y', ''],
      ],
      { out: wide.stream },
    );
    const [, first, second] = wide.text().split('\n');
    assert.equal(first, `${'x'.repeat(200)}  a`);
    assert.equal(second, 'y');
  });

  describe('every list command', () => {
    let dir: string;
    let env: NodeJS.ProcessEnv;
    const lists: Array<[string[], string]> = [
      [['configs', 'list'], 'ID +NAME +VERSION'],
      [['configs', 'versions', 'shop'], 'VERSION +CREATED +BY +CHANGE'],
      [['rows', 'list', 'shop'], 'ID +NAME +VERSION +DISABLED'],
      [['tokens', 'list'], 'ID +PROJECT +ACCESS +CREATED +DESCRIPTION'],
      [['components', 'list'], 'ID +TYPE +NAME +CONFIGURATIONS'],
      [['tables', 'list'], 'TABLE +ROWS +COLUMNS +LAST IMPORT'],
      [['jobs', 'list'], 'ID +STATUS +CONFIGURATION +CREATED'],
      [['schedules', 'list'], 'ID +CRON +STATE +CONFIGURATION +NEXT RUN +LAST JOB +STOPPED'],
      [['notifications', 'list'], 'ID +EVENT +FILTERS +RECIPIENT +CREATED'],
    ];

    before(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-list-headers-'));
      env = { ...TEST_KEY, GEX_STORE: path.join(dir, 'store.sqlite'), KBC_URL: '', KBC_TOKEN: '' };
      await writeFile(path.join(dir, 'users.csv'), 'id,name\n1,Ann\n');
      for (const args of [
        ['configs', 'create', '--name', 'Shop', '--config-id', 'shop'],
        ['rows', 'add', 'shop', '--row-id', 'users', '--name', 'Users'],
        ['tokens', 'create', '--description', 'ci'],
        ['tables', 'import', path.join(dir, 'users.csv'), '--table', 'in.c-shop.users'],
        ['jobs', 'run', 'shop'],
        ['schedules', 'add', 'shop', '--cron', '0 * * * *'],
        ['notifications', 'add', '--event', 'job-failed', '--config', 'shop', '--email', 'ops@example.com'],
      ]) {
        const r = await runGexInProcess(args, env);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.output}`);
      }
    });
    after(() => rm(dir, { recursive: true, force: true }));

    it('covers every list command (a list added later must be added here)', async () => {
      const listing = (await helpTree())
        .filter((c) => c.subcommands.length === 0 && ['list', 'versions'].includes(c.path.at(-1) ?? ''))
        .map((c) => c.path.join(' '));
      assert.deepEqual(listing.sort(), lists.map(([args]) => args.filter((a) => a !== 'shop').join(' ')).sort());
    });

    it('on a terminal: the header first, the rows under it', async () => {
      for (const [args, header] of lists) {
        const gex = startGexInTerminal(args, env, 200);
        const { code } = await gex.exited;
        const lines = gex
          .output()
          .split('\r\n')
          .filter((l) => l.trim() !== '');
        assert.equal(code, 0, `${args.join(' ')}: ${gex.output()}`);
        assert.match(lines[0], new RegExp(`^${header}$`), args.join(' '));
        assert.ok(lines.length >= 2, `${args.join(' ')}: a row under the header`);
        assert.ok(!lines[1].includes('\t'), 'aligned with blanks, not tabs');
      }
    });

    it('piped: tab-separated rows as before, no header', async () => {
      for (const [args, header] of lists) {
        const r = await runGexInProcess(args, env);
        assert.equal(r.code, 0, r.output);
        assert.doesNotMatch(r.stdout, new RegExp(`^${header.split(' +')[0]} `), args.join(' '));
        assert.ok(r.stdout.split('\n')[0].length > 0);
      }
      assert.match(
        (await runGexInProcess(['configs', 'list'], env)).stdout,
        /^shop\tShop\tversion 2, 1 rows \(0 disabled\)\n$/,
      );
      assert.match((await runGexInProcess(['rows', 'list', 'shop'], env)).stdout, /^users\tUsers\tversion 1\n$/);
    });
  });
});
