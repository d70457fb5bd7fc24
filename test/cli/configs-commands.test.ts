import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../support/cli.js';
import { SECRET, StoreCli } from '../support/store-cli.js';
import { storeBackends, TEST_KEY, type FreshStore } from '../support/store.js';

const EDITOR_SCRIPT = path.join(repoRoot, 'test/fixtures/editor/edit-config.mjs');
const HOSTILE_NAME = 'evil\n\u001b[31mred\u202e';

/** `gex configs create|edit|delete|restore|purge|export|import` end to end on each embedded store. */
for (const backend of storeBackends()) {
  describe(`gex configs commands (${backend.name})`, function () {
    this.timeout(120_000);
    let dir: string;
    let store: FreshStore;
    let cli: StoreCli;

    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-configs-cli-'));
      store = await backend.fresh();
      cli = new StoreCli({
        ...TEST_KEY,
        GEX_STORE: store.location,
        KBC_URL: '',
        KBC_TOKEN: '',
        EDITOR: '',
        VISUAL: '',
      });
    });
    afterEach(async () => {
      await store.dispose();
      await rm(dir, { recursive: true, force: true });
    });

    const editor = (mode: string) => ({
      EDITOR: `node ${JSON.stringify(EDITOR_SCRIPT)} ${mode} ${JSON.stringify(path.join(dir, `editor-${mode}.log`))}`,
    });
    const editorCalls = async (mode: string) =>
      (await readFile(path.join(dir, `editor-${mode}.log`), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { file: string; mode: string });

    it('creates with --set and edits with --set, --file and $EDITOR: one version per edit, named changes, no secret in any output', async () => {
      const created = await cli.json([
        'configs',
        'create',
        '--name',
        HOSTILE_NAME,
        '--set',
        'parameters.api.baseUrl=http://x.example/',
        '--set',
        `parameters.#password=${SECRET}`,
        '--set',
        'parameters.config.jobs[0].endpoint=users',
        '--set',
        'parameters.config.jobs[0].params={"limit": 10}',
      ]);
      assert.equal(created.name, HOSTILE_NAME);
      assert.equal(created.version, 1);
      const params = created.configuration.parameters;
      assert.deepEqual(params.config.jobs, [{ endpoint: 'users', params: { limit: 10 } }]);
      assert.match(params['#password'], /^KBC::ProjectSecure::/);
      const id = created.id as string;

      const listed = await cli.ok(['configs', 'list']);
      assert.ok(
        !listed.includes('\u001b') && !listed.includes('\u202e'),
        'no terminal control character reaches the terminal',
      );
      assert.ok(listed.includes('"evil\\n\\u001b[31mred\\u202e"'), listed);

      const edited = await cli.ok([
        'configs',
        'edit',
        id,
        '--set',
        'parameters.api.baseUrl=http://y.example/',
        '--set',
        'parameters.config.jobs[0].endpoint=orders',
      ]);
      assert.match(
        edited,
        /is now version 2 \(changed: parameters\.api\.baseUrl, parameters\.config\.jobs\[0\]\.endpoint\)/,
      );

      // the editor gets the body in a private file that is gone afterwards
      assert.match(
        await cli.ok(['configs', 'edit', id], editor('baseUrl')),
        /now version 3 \(changed: parameters\.api\.baseUrl\)/,
      );
      const [call] = await editorCalls('baseUrl');
      assert.equal(call.mode, '600');
      assert.ok(!existsSync(call.file), 'the temporary file is removed');
      const afterEditor = await cli.json(['configs', 'get', id]);
      assert.equal(afterEditor.configuration.parameters.api.baseUrl, 'http://edited.example/');
      assert.equal(
        afterEditor.configuration.parameters['#password'],
        params['#password'],
        'the secret kept its cipher through the editor',
      );
      assert.equal(afterEditor.changeDescription, 'Changed parameters.api.baseUrl');

      // unchanged file, invalid JSON, a secret re-entered as it was: no version
      assert.match(
        await cli.ok(['configs', 'edit', id], { EDITOR: 'true' }),
        /No change: configuration 1 stays at version 3/,
      );
      const invalid = await cli.fails(['configs', 'edit', id], editor('invalid'));
      assert.match(
        invalid,
        /The edited file is not valid JSON: Syntax error: .* at line 3, column 12.*Nothing was changed/,
      );
      assert.ok(!existsSync((await editorCalls('invalid'))[0].file));
      assert.match(
        await cli.ok(['configs', 'edit', id, '--set', `parameters.#password=${SECRET}`]),
        /No change: configuration 1 stays at version 3/,
      );

      const file = path.join(dir, 'body.json');
      await writeFile(
        file,
        JSON.stringify({ parameters: { api: { baseUrl: 'http://z.example/' }, '#password': SECRET } }),
      );
      const replaced = await cli.json(['configs', 'edit', id, '--file', file, '--change-description', 'from a file']);
      assert.equal(replaced.version, 4);
      assert.equal(replaced.changeDescription, 'from a file');
      assert.equal(replaced.configuration.parameters.config, undefined);

      const versions = await cli.ok(['configs', 'versions', id]);
      assert.deepEqual(
        versions
          .trim()
          .split('\n')
          .map((l) => l.split('\t')[0]),
        ['4', '3', '2', '1'],
      );
      cli.assertNoSecretLeaked();
    });

    it('refuses hostile --set paths and bad JSON files clearly, changing nothing', async () => {
      const { id } = await cli.json(['configs', 'create', '--name', 'c', '--set', 'parameters.a=1']);
      assert.match(
        await cli.fails(['configs', 'edit', id, '--set', '__proto__.polluted=1']),
        /--set path "__proto__\.polluted" uses the key "__proto__", which is refused/,
      );
      assert.match(
        await cli.fails(['configs', 'edit', id, '--set', 'parameters["constructor"].x=1']),
        /uses the key "constructor"/,
      );
      assert.match(
        await cli.fails(['configs', 'edit', id, '--set', 'parameters..a=1']),
        /has an empty key at character 12/,
      );
      assert.match(
        await cli.fails(['configs', 'edit', id, '--set', 'parameters.a[0]=1']),
        /parameters\.a is a number, not a list/,
      );
      assert.match(
        await cli.fails(['configs', 'edit', id, '--set', 'parameters.list[5]=1']),
        /the list has 0 items; an index may be at most 0/,
      );
      assert.match(await cli.fails(['configs', 'edit', id, '--set', 'no-equals-sign']), /--set takes path=value/);
      const bad = path.join(dir, 'bad.json');
      await writeFile(bad, '{\n  "a": 1,\n}');
      assert.match(
        await cli.fails(['configs', 'edit', id, '--file', bad]),
        /bad\.json is not valid JSON: Syntax error: .* at (the end of the input \()?line 3, column 1/,
      );
      assert.equal((await cli.json(['configs', 'get', id])).version, 1);
      // a dotted key is written as a JSON string in brackets
      const dotted = await cli.json(['configs', 'edit', id, '--set', 'parameters["a.b"]=x']);
      assert.equal(dotted.configuration.parameters['a.b'], 'x');
    });

    it('delete moves to the trash, restore brings it back, purge needs the trash and --yes', async () => {
      const { id } = await cli.json(['configs', 'create', '--name', 'doomed']);
      assert.match(
        await cli.fails(['configs', 'purge', id, '--yes']),
        /is not in the trash: only a deleted configuration can be purged/,
      );
      assert.match(await cli.ok(['configs', 'delete', id]), /moved to the trash/);
      assert.equal((await cli.json(['configs', 'list', '--deleted'])).length, 1);
      assert.equal((await cli.json(['configs', 'restore', id])).isDeleted, false);
      await cli.ok(['configs', 'delete', id]);
      assert.match(await cli.fails(['configs', 'purge', id]), /add --yes to do it/);
      assert.equal((await cli.json(['configs', 'list', '--deleted'])).length, 1, 'without --yes nothing is purged');
      assert.match(await cli.ok(['configs', 'purge', id, '--yes']), /purged: it is gone for good/);
      assert.equal((await cli.json(['configs', 'list', '--deleted'])).length, 0);
      const missing = await cli.fails(['configs', 'restore', id]);
      assert.ok(
        missing.includes(
          `looked for configuration ${id} of component ex-generic-v2 in the store ${store.location.split('?')[0]}`,
        ),
        missing,
      );
    });

    it('names the id and the store when something is not found, safely', async () => {
      await cli.ok(['configs', 'create', '--name', 'other']);
      const stderr = await cli.fails(['configs', 'get', 'no\nsuch\u001b[2J']);
      assert.ok(!stderr.includes('\u001b'), stderr);
      assert.match(stderr, /looked for configuration "no\\nsuch\\u001b\[2J" of component ex-generic-v2 in the store/);
      assert.equal(stderr.trim().split('\n').length, 1);
    });

    it('export → import into a fresh store → export gives the same document (ids kept, secrets still encrypted)', async () => {
      const document = {
        name: HOSTILE_NAME,
        configurationId: 'cfg-1',
        description: 'described',
        configuration: { parameters: { api: { baseUrl: 'http://x/' }, '#password': SECRET, n: 1.0 } },
        state: { component: { cursor: 7 } },
        rows: [
          {
            rowId: '../../x',
            name: 'row\r\none',
            configuration: { parameters: { '#rowSecret': SECRET } },
            state: { component: { 'json_parser.struct': { a: 1 }, since: '2024' } },
          },
          { rowId: 'b', name: 'B', isDisabled: true, configuration: { parameters: { list: [] } } },
        ],
        rowsSortOrder: ['b', '../../x'],
      };
      const source = path.join(dir, 'source.json');
      await writeFile(source, JSON.stringify(document));
      await cli.ok(['configs', 'import', source]);
      const exportFile = path.join(dir, 'export.json');
      assert.match(
        await cli.ok(['configs', 'export', 'cfg-1', '--file', exportFile]),
        /Exported configuration cfg-1 with 2 rows/,
      );
      const first = await readFile(exportFile, 'utf8');
      assert.ok(!first.includes(SECRET), 'the export holds ciphers only');
      assert.match(first, /"#rowSecret": "KBC::ProjectSecure::/);
      assert.match(await cli.fails(['configs', 'export', 'cfg-1', '--file', exportFile]), /exists already/);

      const other = await backend.fresh();
      try {
        const otherCli = new StoreCli({ ...TEST_KEY, GEX_STORE: other.location, KBC_URL: '' });
        await otherCli.ok(['configs', 'import', exportFile]);
        const second = await otherCli.ok(['configs', 'export', 'cfg-1']);
        assert.equal(second, first);
        const parsed = JSON.parse(second);
        assert.deepEqual(parsed.rowsSortOrder, ['b', '../../x']);
        assert.deepEqual(
          parsed.rows.map((r: { rowId: string }) => r.rowId),
          ['b', '../../x'],
        );
        assert.equal(parsed.rows[0].isDisabled, true);
        otherCli.assertNoSecretLeaked();
      } finally {
        await other.dispose();
      }
      cli.assertNoSecretLeaked();
    });

    it('imports all or nothing: a failing third row leaves no configuration behind', async () => {
      const file = path.join(dir, 'broken.json');
      await writeFile(
        file,
        JSON.stringify({
          name: 'half',
          configurationId: 'half',
          configuration: {},
          rows: [{ rowId: 'a' }, { rowId: 'b' }, { rowId: 'a' }],
        }),
      );
      const stderr = await cli.fails(['configs', 'import', file]);
      assert.match(
        stderr,
        /Import failed at rows\[2\] \(id a\): .*Nothing was imported \(one transaction, rolled back\)/,
      );
      assert.deepEqual(await cli.json(['configs', 'list']), []);
      assert.deepEqual(await cli.json(['configs', 'list', '--deleted']), []);
      // the same id imports fine afterwards: nothing of the failed attempt is left
      await writeFile(
        file,
        JSON.stringify({ name: 'half', configurationId: 'half', rows: [{ rowId: 'a' }, { rowId: 'b' }] }),
      );
      assert.equal((await cli.json(['configs', 'import', file])).rows.length, 2);
    });
  });
}
