import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '../support/cli.js';
import { runGexInProcess } from '../support/in-process-gex.js';

describe('gex command line: version, help examples, mistyped commands', () => {
  it('prints the version of package.json with --version and -V', async () => {
    const { version } = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await runGexInProcess([flag]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${version}\n`);
    }
  });

  it('answers a mistyped command with one line and a hint, not the whole help, exit 1', async () => {
    const r = await runGexInProcess(['rnu']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'Unknown command "rnu". Did you mean "run"?\nRun "gex --help" for the list of commands (run, check, schema, serve, tokens, components, configs, rows, state, tables, jobs, schedules, flows, notifications, worker).\n',
    );

    const options = await runGexInProcess(['--log-level', 'debug', 'srve', '--port', '1']);
    assert.equal(options.code, 1);
    assert.match(options.stderr, /^Unknown command "srve"\. Did you mean "serve"\?\n/);

    const unlike = await runGexInProcess(['zzzz']);
    assert.equal(unlike.code, 1);
    assert.equal(unlike.stderr.split('\n')[0], 'Unknown command "zzzz".');
    assert.ok(!unlike.stderr.includes('Options:'), 'no help dump');
  });

  it('shows a hostile command word as one quoted token: it cannot add or rewrite a line', async () => {
    const r = await runGexInProcess(['x\n\u001b[2Kforged line']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.split('\n')[0], 'Unknown command "x\\n\\u001b[2Kforged line".');
    assert.equal(r.stderr.split('\n').length, 3);
  });

  it('answers every other mistake with the message and the command to ask for help, never the whole help, exit 1', async () => {
    const cases: Array<[string[], string]> = [
      [['run', 'extra'], 'Error: Unknown argument: extra\nRun "gex run --help" for its options and examples.\n'],
      [
        ['configs', 'edit', 'x', '--bogus'],
        'Error: Unknown argument: --bogus\nRun "gex configs edit --help" for its options and examples.\n',
      ],
      [
        ['configs', 'edit', 'x', '--file'],
        'Error: --file needs a value, and none was given\nRun "gex configs edit --help" for its options and examples.\n',
      ],
      [
        ['configs', 'get'],
        'Error: <id> missing: gex configs get <id>\nRun "gex configs get --help" for its options and examples.\n',
      ],
      [
        ['rows', 'move', 'c'],
        'Error: <row-id> missing: gex rows move <config-id> <row-id>\nRun "gex rows move --help" for its options and examples.\n',
      ],
      [
        ['run', '--log-level', 'loud'],
        'Error: --log-level takes one of "debug", "info", "warn", "error", "silent", got "loud"\nRun "gex run --help" for its options and examples.\n',
      ],
    ];
    for (const [args, expected] of cases) {
      const r = await runGexInProcess(args);
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.stderr, expected, args.join(' '));
      assert.ok(!r.stderr.includes('Options:'), 'no help dump');
    }
  });

  it('names the actions of a command when one is missing or mistyped', async () => {
    const missing = await runGexInProcess(['rows']);
    assert.equal(missing.code, 1);
    assert.equal(
      missing.stderr,
      'gex rows needs an action: list, add, edit, remove, enable, disable, move.\nRun "gex rows --help" for what each does.\n',
    );
    const typo = await runGexInProcess(['configs', 'lst']);
    assert.match(
      typo.stderr,
      /^Unknown action "lst" of gex configs\. Did you mean "list"\? The actions are list, get, /,
    );
    const hostile = await runGexInProcess(['tokens', 'x\n\u001b[2Kforged']);
    assert.equal(
      hostile.stderr.split('\n')[0].startsWith('Unknown action "x\\n\\u001b[2Kforged" of gex tokens.'),
      true,
      hostile.stderr,
    );
    assert.equal(hostile.stderr.split('\n').length, 3);
  });

  it('shows examples in the help of the main commands', async () => {
    for (const [args, example] of [
      [['--help'], /gex run --config-id 123 --store gex-store\.sqlite/],
      [['run', '--help'], /gex run --data-dir \.\/data --summary summary\.json/],
      [['serve', '--help'], /gex serve --metrics false/],
      [['configs', '--help'], /gex configs rollback 123 4/],
      [['tokens', '--help'], /gex tokens create --description ci/],
    ] as const) {
      const r = await runGexInProcess([...args]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Examples:/, args.join(' '));
      assert.match(r.stdout, example, args.join(' '));
    }
  });
});
