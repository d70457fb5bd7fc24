import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runGexInProcess } from '../support/in-process-gex.js';
import { TEST_KEY } from '../support/store.js';

/**
 * Every JSON file a person writes and gex reads — config.json, in/state.json, an import document,
 * a body file, a component list, a `--set` value — fails on a syntax error naming the file, the
 * line and the column (what an editor shows), never only a character offset.
 */
describe('gex: a JSON syntax error in what a user wrote names its line and column', function () {
  this.timeout(60_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  /** the second line ends in a comma before "}" on the third: line 3, column 1 */
  const BROKEN = '{\n  "parameters": {"api": {"baseUrl": "http://127.0.0.1:1/"}},\n}\n';

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-json-errors-'));
    env = { ...TEST_KEY, GEX_STORE: path.join(dir, 'store.sqlite'), KBC_URL: '', KBC_TOKEN: '', KBC_DATADIR: '' };
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const where = /Syntax error: property name expected at line 3, column 1/;

  it('config.json and in/state.json of a data folder: gex run and gex check, exit 1', async () => {
    const data = path.join(dir, 'data');
    await mkdir(path.join(data, 'in'), { recursive: true });
    await writeFile(path.join(data, 'config.json'), BROKEN);
    for (const command of ['run', 'check']) {
      const r = await runGexInProcess([command, '--data-dir', data], env);
      assert.equal(r.code, 1, r.output);
      assert.match(r.output, /config\.json is not valid JSON: /);
      assert.match(r.output, where);
      assert.doesNotMatch(r.output, /offset/);
    }
    await writeFile(
      path.join(data, 'config.json'),
      JSON.stringify({
        parameters: { api: { baseUrl: 'http://127.0.0.1:1/' }, config: { jobs: [{ endpoint: 'x' }] } },
      }),
    );
    await writeFile(path.join(data, 'in', 'state.json'), '{"a":\n  [1, 2\n}');
    const r = await runGexInProcess(['run', '--data-dir', data], env);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /state\.json is not valid JSON: Syntax error: .* at line 3, column 1/);
  });

  it('an import document, a body file and a component list; a --set value that starts like JSON', async () => {
    const file = path.join(dir, 'broken.json');
    await writeFile(file, BROKEN);
    for (const args of [
      ['configs', 'import', file],
      ['configs', 'create', '--name', 'x', '--file', file],
      ['components', 'import', file],
    ]) {
      const r = await runGexInProcess(args, env);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.output}`);
      assert.match(r.stderr, /broken\.json is not valid JSON: /, args.join(' '));
      assert.match(r.stderr, where, args.join(' '));
    }
    const set = await runGexInProcess(
      ['configs', 'create', '--name', 'x', '--set', 'parameters.config={"jobs": [}'],
      env,
    );
    assert.equal(set.code, 1, set.output);
    assert.match(
      set.stderr,
      /^Error: --set parameters\.config: the value is not valid JSON: Syntax error: unexpected character '\}' at line 1, column 11\. A value starting with \{, \[ or " must be JSON/,
    );
    // text that does not start like JSON stays text, as before
    const text = await runGexInProcess(
      ['configs', 'create', '--name', 'x', '--set', 'parameters.note=a {b', '--json'],
      env,
    );
    assert.equal(text.code, 0, text.output);
    assert.equal(JSON.parse(text.stdout).configuration.parameters.note, 'a {b');
  });
});
