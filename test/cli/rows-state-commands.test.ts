import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SECRET, StoreCli } from '../support/store-cli.js';
import { storeBackends, TEST_KEY, type FreshStore } from '../support/store.js';

/** `gex rows …`, `gex state …`, `gex tokens list|revoke`, `gex components list|show` on each embedded store. */
for (const backend of storeBackends()) {
  describe(`gex rows, state, tokens and components commands (${backend.name})`, function () {
    this.timeout(120_000);
    let dir: string;
    let store: FreshStore;
    let cli: StoreCli;

    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-rows-cli-'));
      store = await backend.fresh();
      cli = new StoreCli({
        ...TEST_KEY,
        GEX_STORE: store.location,
        KBC_URL: '',
        KBC_TOKEN: '',
        EDITOR: '',
        VISUAL: '',
      });
      await writeFile(
        path.join(dir, 'config.json'),
        JSON.stringify({
          name: 'rows',
          configurationId: 'c1',
          configuration: { parameters: { api: { baseUrl: 'http://x/' } } },
          state: { component: { 'json_parser.struct': { data: {} }, 'json_parser.structVersion': 3, cursor: 'root' } },
          rows: [
            {
              rowId: 'a',
              name: 'A',
              state: {
                component: { 'json_parser.struct': {}, since: 'a-state' },
                storage: { input: { tables: [], files: [] } },
              },
            },
            { rowId: 'b', name: 'B', state: { component: { since: 'b-state' } } },
          ],
        }),
      );
      await cli.ok(['configs', 'import', path.join(dir, 'config.json')]);
    });
    afterEach(async () => {
      await store.dispose();
      await rm(dir, { recursive: true, force: true });
    });

    it('adds, edits (one version), disables, enables, moves and removes rows; hostile ids and names stay one safe token', async () => {
      const added = await cli.json([
        'rows',
        'add',
        'c1',
        '--row-id',
        '../../x',
        '--name',
        'bad\nname\u001b[1m',
        '--set',
        'parameters.config.jobs[0].endpoint=users',
        '--set',
        `parameters.#token=${SECRET}`,
      ]);
      assert.equal(added.id, '../../x');
      assert.match(added.configuration.parameters['#token'], /^KBC::ProjectSecure::/);
      const list = await cli.ok(['rows', 'list', 'c1']);
      assert.deepEqual(
        list
          .trim()
          .split('\n')
          .map((l) => l.split('\t')[0]),
        ['../../x', 'a', 'b'],
      );
      assert.ok(list.includes('"bad\\nname\\u001b[1m"') && !list.includes('\u001b'), list);

      const before = (await cli.json(['configs', 'get', 'c1'])).version;
      const edited = await cli.ok([
        'rows',
        'edit',
        'c1',
        '--row-id',
        '../../x',
        '--set',
        'parameters.config.jobs[0].endpoint=orders',
        '--set',
        'parameters.config.jobs[1].endpoint=items',
      ]);
      assert.match(
        edited,
        /Row \.\.\/\.\.\/x of configuration c1 is now version 2 \(changed: parameters\.config\.jobs\[0\]\.endpoint, parameters\.config\.jobs\[1\]\)/,
      );
      assert.equal(
        (await cli.json(['configs', 'get', 'c1'])).version,
        before + 1,
        'one configuration version for the edit',
      );

      const disabled = await cli.json(['rows', 'disable', 'c1', '--row-id', 'a,b']);
      assert.deepEqual(
        disabled.map((r: { isDisabled: boolean }) => r.isDisabled),
        [true, true],
      );
      await cli.ok(['rows', 'enable', 'c1', '--row-id', 'a', '--row-id', 'b']);
      assert.deepEqual(
        (await cli.json(['rows', 'list', 'c1'])).map((r: { isDisabled: boolean }) => r.isDisabled),
        [false, false, false],
      );
      assert.match(
        await cli.fails(['rows', 'disable', 'c1', '--row-id', 'a,nope']),
        /has no row nope: nothing was changed/,
      );
      assert.equal((await cli.json(['rows', 'list', 'c1']))[1].isDisabled, false);

      assert.deepEqual((await cli.json(['rows', 'move', 'c1', '../../x', '--last'])).rowsSortOrder, [
        'a',
        'b',
        '../../x',
      ]);
      assert.deepEqual((await cli.json(['rows', 'move', 'c1', 'b', '--before', 'a'])).rowsSortOrder, [
        'b',
        'a',
        '../../x',
      ]);
      assert.deepEqual((await cli.json(['rows', 'move', 'c1', 'b', '--after', '../../x'])).rowsSortOrder, [
        'a',
        '../../x',
        'b',
      ]);
      assert.match(await cli.ok(['rows', 'move', 'c1', 'a', '--first']), /No change/);
      assert.match(
        await cli.fails(['rows', 'move', 'c1', 'a', '--first', '--last']),
        /exactly one of --before ROW, --after ROW, --first, --last/,
      );
      assert.match(
        await cli.fails(['rows', 'move', 'c1', 'zz', '--first']),
        /No row zz in this configuration; its rows are a, \.\.\/\.\.\/x, b/,
      );

      await cli.ok(['rows', 'remove', 'c1', '--row-id', '../../x']);
      assert.deepEqual((await cli.json(['configs', 'get', 'c1'])).rowsSortOrder, ['a', 'b']);
      const missing = await cli.fails(['rows', 'edit', 'c1', '--row-id', '../../x', '--set', 'a=1']);
      assert.match(
        missing,
        /Row \.\.\/\.\.\/x not found \(looked for row \.\.\/\.\.\/x of configuration c1 of component ex-generic-v2 in the store/,
      );
      cli.assertNoSecretLeaked();
    });

    it('shows the component state without the parser keys (all with --all) and resets rows named as a comma list', async () => {
      assert.deepEqual(JSON.parse(await cli.ok(['state', 'show', 'c1'])), { cursor: 'root' });
      assert.deepEqual(JSON.parse(await cli.ok(['state', 'show', 'c1', '--all'])), {
        'json_parser.struct': { data: {} },
        'json_parser.structVersion': 3,
        cursor: 'root',
      });
      assert.deepEqual((await cli.json(['state', 'show', 'c1', '--row-id', 'a'])).component, { since: 'a-state' });
      assert.match(
        await cli.fails(['state', 'reset', 'c1', '--row-id', 'a,nope']),
        /has no row nope: nothing was reset/,
      );
      assert.match(
        await cli.ok(['state', 'reset', 'c1', '--row-id', 'a,b']),
        /State of rows a, b of configuration c1 reset to \{\}/,
      );
      assert.deepEqual(JSON.parse(await cli.ok(['state', 'show', 'c1', '--row-id', 'b'])), {});
      assert.deepEqual(
        JSON.parse(await cli.ok(['state', 'show', 'c1'])),
        { cursor: 'root' },
        'the root state is untouched',
      );
      // the old spelling still works
      assert.match(await cli.ok(['configs', 'state-reset', 'c1']), /State of configuration c1 reset to \{\}/);
      assert.deepEqual(JSON.parse(await cli.ok(['state', 'show', 'c1', '--all'])), {});
    });

    it('lists tokens without their text and revokes them by id', async () => {
      const created = await cli.run([
        'tokens',
        'create',
        '--description',
        'ci\n\u001b[31mfake line',
        '--project',
        'p1',
      ]);
      assert.equal(created.code, 0, created.stderr);
      const token = created.stdout.trim();
      assert.ok(!created.stderr.includes('\u001b'));
      const listed = await cli.json(['tokens', 'list']);
      assert.equal(listed.length, 1, 'internal tokens are not listed');
      assert.deepEqual(Object.keys(listed[0]), [
        'id',
        'description',
        'project',
        'readOnly',
        'master',
        'runner',
        'created',
      ]);
      assert.equal(listed[0].master, false, 'a token is a master token only when asked for');
      assert.equal(listed[0].runner, false, 'and a runner token only when asked for');
      assert.equal(listed[0].project, 'p1');
      const text = await cli.ok(['tokens', 'list']);
      assert.ok(!text.includes(token) && !text.includes(token.slice(-20)) && !text.includes('\u001b'), text);
      assert.match(
        text,
        new RegExp(`^${listed[0].id}\\tp1\\tread-write\\t\\S+\\t"ci\\\\n\\\\u001b\\[31mfake line"\\n$`),
      );

      // KBC_URL names the store and KBC_TOKEN the token, as for gex run
      assert.deepEqual(
        await cli.json(['configs', 'list'], { GEX_STORE: '', KBC_TOKEN: token, KBC_URL: store.location }),
        [],
        'project p1 sees no configuration of the default project',
      );
      assert.match(
        await cli.fails(['rows', 'list', 'c1'], { GEX_STORE: '', KBC_TOKEN: token, KBC_URL: store.location }),
        /Configuration c1 not found/,
      );
      assert.match(await cli.ok(['tokens', 'revoke', String(listed[0].id)]), /Token \d+ revoked/);
      assert.match(await cli.fails(['configs', 'list', '--token', token]), /Invalid access token/);
      assert.match(await cli.fails(['tokens', 'revoke', String(listed[0].id)]), /No token \d+ in the store/);
      assert.match(await cli.fails(['tokens', 'revoke', '../1']), /A token id is a number/);

      // a master token manages tokens over HTTP; it is never read-only
      const master = await cli.run(['tokens', 'create', '--description', 'admin', '--master', '--project', 'p1']);
      assert.equal(master.code, 0, master.stderr);
      assert.match(master.stderr, /Token \d+ "admin" of project "p1" \(master\) created/);
      assert.deepEqual(
        (await cli.json(['tokens', 'list', '--project', 'p1'])).map((t: { master: boolean; readOnly: boolean }) => [
          t.master,
          t.readOnly,
        ]),
        [[true, false]],
      );
      assert.match(await cli.ok(['tokens', 'list', '--project', 'p1']), /\tp1\tmaster\t/);
      assert.match(
        await cli.fails(['tokens', 'create', '--description', 'x', '--master', '--read-only']),
        /--master and --read-only exclude each other/,
      );
      assert.match(await cli.fails(['tokens', 'create', '--description', ' ']), /A token needs a description/);

      // a runner token receives secrets decrypted: read-write, never master
      const runner = await cli.run(['tokens', 'create', '--description', 'airflow', '--runner', '--project', 'p2']);
      assert.equal(runner.code, 0, runner.stderr);
      assert.match(
        runner.stderr,
        /Token \d+ "airflow" of project "p2" \(runner: receives the project's secrets decrypted\)/,
      );
      assert.deepEqual(
        (await cli.json(['tokens', 'list', '--project', 'p2'])).map((t: { runner: boolean; master: boolean }) => [
          t.runner,
          t.master,
        ]),
        [[true, false]],
      );
      assert.match(await cli.ok(['tokens', 'list', '--project', 'p2']), /\tp2\trunner\t/);
      for (const other of ['--master', '--read-only'])
        assert.match(
          await cli.fails(['tokens', 'create', '--description', 'x', '--runner', other]),
          new RegExp(`--runner and ${other} exclude each other`),
        );
      assert.match(
        await cli.fails(['tokens', 'list', '--store', 'http://127.0.0.1:9/']),
        /Tokens live in the embedded store/,
      );
    });

    it('lists and shows components', async () => {
      const listed = await cli.ok(['components', 'list']);
      assert.match(listed, /^ex-generic-v2\textractor\t.*\t1 configurations$/m);
      assert.equal((await cli.json(['components', 'show', 'ex-generic-v2'])).id, 'ex-generic-v2');
      assert.match(
        await cli.fails(['components', 'show', 'nope\u001b']),
        /Component nope.* not found.*\(looked for component "nope\\u001b" in the store/,
      );
    });
  });
}
