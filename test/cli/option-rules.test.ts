import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EMPTY_VALUE_OPTIONS, OPTIONAL_VALUE_OPTIONS } from '../../src/cli/options/option-checks.js';
import { BUILT_IN_DESCRIPTIONS, commandLine, helpTree, type CommandHelp } from '../support/cli-help.js';
import { runGexInProcess } from '../support/in-process-gex.js';

/**
 * The rules every option of every command follows, tried on every option of every command the
 * help lists (so a command or option added later is tried too): no yargs built-in shadows a
 * command's option, an option that takes a value is never run without one, a number option holds
 * a whole number in its range, and a mistyped option is answered with the real one. Each attempt
 * runs in an empty folder with no store: nothing may be created (the command never ran).
 */

/** A typo of `name`: two neighbouring letters swapped in its last word ("config-id" → "config-di"). */
function typo(name: string): string {
  const at = name.length - 2;
  return `${name.slice(0, at)}${name[at + 1]}${name[at]}`;
}

describe('gex options: the rules every option of every command follows', function () {
  this.timeout(300_000);
  let commands: CommandHelp[];
  let leaves: CommandHelp[];
  let dir: string;
  const env = () => ({ GEX_STORE: path.join(dir, 'no-store.sqlite'), KBC_URL: '', KBC_TOKEN: '', KBC_CONFIGID: '' });

  before(async () => {
    commands = await helpTree();
    leaves = commands.filter((c) => c.path.length > 0 && c.subcommands.length === 0);
    // every command and action of gex: the walk found them all
    assert.ok(leaves.length >= 45, `${leaves.length} commands found`);
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-option-rules-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));
  afterEach(async () => assert.deepEqual(await readdir(dir), [], 'no command ran: nothing was created'));

  it('has no option shadowed by a yargs built-in: --help is the only one, and --version is the top level’s alone', async () => {
    for (const command of commands) {
      const where = `gex ${command.path.join(' ')}`;
      const names = command.options.map((o) => o.name);
      assert.equal(new Set(names).size, names.length, `${where}: an option listed twice`);
      for (const option of command.options) {
        const builtIn = BUILT_IN_DESCRIPTIONS.has(option.describe);
        if (option.name === 'help') assert.ok(builtIn, `${where}: --help is its own option`);
        else if (option.name === 'version' && command.path.length === 0) assert.ok(builtIn);
        else assert.ok(!builtIn, `${where}: --${option.name} is a yargs built-in`);
      }
    }
    // the option a built-in used to shadow is the command's
    const get = commands.find((c) => c.path.join(' ') === 'configs get')!;
    assert.equal(get.options.find((o) => o.name === 'version')?.type, 'number');
  });

  it('refuses every option that takes a value when it is given none — at the end, before another option, or negated', async () => {
    let tried = 0;
    for (const command of leaves) {
      for (const option of command.options) {
        if (option.type === 'boolean' || OPTIONAL_VALUE_OPTIONS.has(option.name)) continue;
        const base = commandLine(command, option.name);
        const attempts = [
          [...base, `--${option.name}`],
          [...base, `--${option.name}`, '--log-level', 'info'],
          [...base, `--no-${option.name}`],
          // an empty value ("$UNSET_VARIABLE") is none, but where an empty text means something
          ...(EMPTY_VALUE_OPTIONS.has(option.name)
            ? []
            : [
                [...base, `--${option.name}`, ''],
                [...base, `--${option.name}= `],
              ]),
        ];
        for (const args of attempts) {
          const r = await runGexInProcess(args, env(), { cwd: dir });
          tried++;
          assert.equal(r.code, 1, `gex ${args.join(' ')}: ${r.stdout}${r.stderr}`);
          assert.match(
            r.stderr.split('\n')[0],
            new RegExp(`^Error: .*--?${option.name}\\b`),
            `gex ${args.join(' ')} names the option`,
          );
          assert.match(
            r.stderr,
            /needs a value|takes a value|takes one of|takes a whole number/,
            `gex ${args.join(' ')}`,
          );
        }
      }
    }
    assert.ok(tried > 300, `${tried} attempts`);
  });

  it('takes an empty value only where an empty text means something', () => {
    const empty = new Set(
      leaves.flatMap((c) => c.options.filter((o) => EMPTY_VALUE_OPTIONS.has(o.name)).map((o) => o.name)),
    );
    assert.deepEqual([...empty].sort(), [...EMPTY_VALUE_OPTIONS].sort(), 'no stale name in EMPTY_VALUE_OPTIONS');
  });

  it('takes the options that may go without a value without one', async () => {
    const optional = leaves.flatMap((c) =>
      c.options
        .filter((o) => o.type !== 'boolean' && OPTIONAL_VALUE_OPTIONS.has(o.name))
        .map((o) => `${c.path.join(' ')} --${o.name}`),
    );
    assert.deepEqual(optional.sort(), ['configs import --new-id', 'run --wait']);
  });

  it('refuses a number option whose value is no whole number in its range: exit 1 naming the option', async () => {
    let tried = 0;
    for (const command of leaves) {
      for (const option of command.options.filter((o) => o.type === 'number')) {
        for (const value of ['abc', '-1', '1.5', '1e18', '0x10', '']) {
          const args = [...commandLine(command, option.name), `--${option.name}`, value];
          const r = await runGexInProcess(args, env(), { cwd: dir });
          tried++;
          assert.equal(r.code, 1, `gex ${args.join(' ')}: ${r.stdout}${r.stderr}`);
          assert.match(
            r.stderr,
            new RegExp(`^Error: --${option.name} (takes |needs a value, and it was given an empty one)`),
            `gex ${args.join(' ')}`,
          );
        }
      }
    }
    assert.ok(tried >= 60, `${tried} attempts`);
    const port = await runGexInProcess(['serve', '--port', '99999'], env(), { cwd: dir });
    assert.equal(port.code, 1);
    assert.equal(
      port.stderr,
      'Error: --port takes a whole number from 0 to 65535, got 99999\nRun "gex serve --help" for its options and examples.\n',
    );
  });

  it('answers a mistyped option with the option meant', async () => {
    let tried = 0;
    for (const command of leaves) {
      const names = command.options.map((o) => o.name);
      for (const option of names.filter((n) => n.length >= 5)) {
        const wrong = typo(option);
        if (names.includes(wrong)) continue;
        const args = [...commandLine(command), `--${wrong}`, 'x'];
        const r = await runGexInProcess(args, env(), { cwd: dir });
        tried++;
        assert.equal(r.code, 1, `gex ${args.join(' ')}`);
        assert.equal(
          r.stderr.split('\n')[0],
          `Error: Unknown argument: --${wrong}. Did you mean --${option}?`,
          `gex ${args.join(' ')}`,
        );
      }
    }
    assert.ok(tried > 200, `${tried} attempts`);
    const far = await runGexInProcess(['run', '--zzzzzzzz'], env(), { cwd: dir });
    assert.equal(
      far.stderr,
      'Error: Unknown argument: --zzzzzzzz\nRun "gex run --help" for its options and examples.\n',
    );
  });
});
