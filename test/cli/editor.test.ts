import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { editJson } from '../../src/cli/input/editor.js';
import { UserError } from '../../src/common/errors.js';
import { fromPlain, stringifyExact } from '../../src/json/index.js';
import { repoRoot } from '../support/cli.js';

const SCRIPT = path.join(repoRoot, 'test/fixtures/editor/edit-config.mjs');

describe('editing JSON in $EDITOR', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(path.join(os.tmpdir(), 'gex-editor-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const body = fromPlain({ parameters: { api: { baseUrl: 'http://x/' } } });
  const env = (mode: string) => ({
    ...process.env,
    EDITOR: '',
    VISUAL: `node ${JSON.stringify(SCRIPT)} ${mode} ${JSON.stringify(path.join(dir, 'log'))}`,
  });

  it('re-opens the editor on invalid JSON when a person is at the terminal, and takes the fixed file', async () => {
    const notices: string[] = [];
    const edited = await editJson(body, 'configuration.json', {
      env: env('invalid-then-fix'),
      interactive: true,
      notice: (l) => notices.push(l),
    });
    assert.equal(stringifyExact(edited!), '{"parameters":{"api":{"baseUrl":"http://edited.example/"}}}');
    assert.equal(notices.length, 1);
    assert.match(
      notices[0],
      /not valid JSON: Syntax error: .* at line 3, column 12.*Opening the editor again; save the file unchanged to give up/,
    );
    assert.equal(
      (await readFile(path.join(dir, 'log'), 'utf8')).trim().split('\n').length,
      2,
      '$VISUAL was used, twice',
    );
  });

  it('gives up when the invalid file is saved unchanged again, and fails at once when not interactive', async () => {
    await assert.rejects(
      editJson(body, 'c.json', { env: env('invalid'), interactive: true, notice: () => undefined }),
      /line 3, column 12.*Nothing was changed/,
    );
    await assert.rejects(
      editJson(body, 'c.json', { env: env('invalid'), interactive: false }),
      /line 3, column 12.*Nothing was changed/,
    );
  });

  it('opens the editor again when the check refuses the edited value (at a terminal), so the edits are not lost', async () => {
    const notices: string[] = [];
    const check = async (value: unknown) => {
      if (stringifyExact(value as never).includes('"abc"'))
        throw new UserError(
          'GEX_CONFIG_REFUSED',
          'Not stored: a run would refuse it. parameters.api.pagination.limit: got "abc"',
        );
    };
    const edited = await editJson(body, 'c.json', {
      env: env('refused-then-fix'),
      interactive: true,
      notice: (l) => notices.push(l),
      check,
    });
    assert.match(stringifyExact(edited!), /"limit":10/);
    assert.deepEqual(notices, [
      'Not stored: a run would refuse it. parameters.api.pagination.limit: got "abc". Opening the editor again; save the file unchanged to give up.',
    ]);
    const first = {
      ...process.env,
      EDITOR: `node ${JSON.stringify(SCRIPT)} refused-then-fix ${JSON.stringify(path.join(dir, 'other-log'))}`,
    };
    await assert.rejects(
      editJson(body, 'c.json', { env: first, interactive: false, check }),
      /got "abc"\. Nothing was changed\./,
    );
    // only the check's refusals: another error ends the edit as it is
    await assert.rejects(
      editJson(body, 'c.json', {
        env: env('baseUrl'),
        interactive: true,
        check: async () => Promise.reject(new Error('bug')),
      }),
      /^Error: bug$/,
    );
  });

  it('reports an editor that fails and returns nothing for an unchanged file', async () => {
    await assert.rejects(
      editJson(body, 'c.json', { env: { ...process.env, EDITOR: 'false' } }),
      /The editor "false" ended with exit code 1: nothing was changed/,
    );
    assert.equal(await editJson(body, 'c.json', { env: { ...process.env, EDITOR: 'true' } }), undefined);
  });
});
