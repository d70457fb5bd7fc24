import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SECRET, StoreCli } from '../support/store-cli.js';
import { storeBackends, TEST_KEY, type FreshStore } from '../support/store.js';

interface Version {
  version: number;
  changeDescription: string;
}

/** `gex configs import` into a store that already has the document's id: --new-id, --replace, and what it says. */
for (const backend of storeBackends()) {
  describe(`gex configs import of an id the store has (${backend.name})`, function () {
    this.timeout(120_000);
    let dir: string;
    let store: FreshStore;
    let cli: StoreCli;

    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gex-import-cli-'));
      store = await backend.fresh();
      cli = new StoreCli({ ...TEST_KEY, GEX_STORE: store.location, KBC_URL: '', KBC_TOKEN: '' });
    });
    afterEach(async () => {
      await store.dispose();
      await rm(dir, { recursive: true, force: true });
    });

    const SHOP = {
      name: 'Shop',
      configurationId: 'shop',
      configuration: { parameters: { api: { baseUrl: 'http://x.example/' }, '#password': SECRET } },
      state: { component: { since: 1 } },
      rows: [
        {
          rowId: 'a',
          name: 'A',
          configuration: { parameters: { config: { jobs: [{ endpoint: 'a' }] } } },
          state: { component: { a: 1 } },
        },
        { rowId: 'b', name: 'B', configuration: { parameters: { config: { jobs: [{ endpoint: 'b' }] } } } },
      ],
      rowsSortOrder: ['b', 'a'],
    };
    const file = async (name: string, document: unknown) => {
      const where = path.join(dir, name);
      await writeFile(where, JSON.stringify(document));
      return where;
    };
    const versions = async (id: string) => cli.json<Version[]>(['configs', 'versions', id]);

    it('says in one line that the id is taken and offers --new-id and --replace; nothing changes', async () => {
      const shop = await file('shop.json', SHOP);
      await cli.ok(['configs', 'import', shop]);
      const before = await versions('shop');
      const stderr = await cli.fails(['configs', 'import', shop]);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
      assert.match(
        stderr,
        /^Error: Import failed at creating the configuration: Configuration shop already exists\. Nothing was imported/,
      );
      assert.match(
        stderr,
        /--new-id gives it a new id .*--replace makes the existing configuration the imported one \(one new version/,
      );
      assert.ok(!/\.\./.test(stderr), `no doubled period: ${stderr}`);
      assert.deepEqual(await versions('shop'), before);
      cli.assertNoSecretLeaked();
    });

    it('--new-id imports a copy under an id the store draws, --new-id ID under that id; the original is untouched', async () => {
      const shop = await file('shop.json', SHOP);
      await cli.ok(['configs', 'import', shop]);
      const before = await cli.ok(['configs', 'export', 'shop']);
      const drawn = await cli.json(['configs', 'import', shop, '--new-id']);
      assert.notEqual(drawn.id, 'shop');
      assert.deepEqual(
        drawn.rows.map((r: { id: string }) => r.id),
        ['b', 'a'],
      );
      const named = await cli.json(['configs', 'import', '--new-id', 'shop-2', shop]);
      assert.equal(named.id, 'shop-2');
      assert.deepEqual(named.state, { component: { since: 1 } });
      assert.equal(await cli.ok(['configs', 'export', 'shop']), before);
      assert.match(
        await cli.fails(['configs', 'import', shop, '--new-id', 'shop-2']),
        /Configuration shop-2 already exists/,
      );
      cli.assertNoSecretLeaked();
    });

    it('--replace makes the stored configuration the document as ONE new version: rows changed, added and removed, order, states', async () => {
      await cli.ok(['configs', 'import', await file('shop.json', SHOP)]);
      const before = await cli.json(['configs', 'get', 'shop']);
      const versionsBefore = await versions('shop');
      const rowA = before.rows.find((r: { id: string }) => r.id === 'a');

      const next = {
        ...SHOP,
        name: 'Shop 2',
        description: 'replaced',
        configuration: { parameters: { api: { baseUrl: 'http://y.example/' }, '#password': SECRET } },
        state: { component: { since: 2 } },
        rows: [
          {
            rowId: 'c',
            name: 'C',
            configuration: { parameters: { config: { jobs: [{ endpoint: 'c' }] } } },
            state: { component: { c: 3 } },
          },
          { rowId: 'a', name: 'A2', configuration: { parameters: { config: { jobs: [{ endpoint: 'a2' }] } } } },
          { name: 'drawn id', configuration: {} },
        ],
        rowsSortOrder: [],
      };
      const replacing = await file('next.json', next);
      const replaced = await cli.json(['configs', 'import', replacing, '--replace']);
      assert.equal(replaced.id, 'shop');
      assert.equal(replaced.name, 'Shop 2');
      assert.equal(replaced.description, 'replaced');
      assert.equal(replaced.version, before.version + 1, 'one new version');
      assert.equal(replaced.configuration.parameters.api.baseUrl, 'http://y.example/');
      assert.match(replaced.configuration.parameters['#password'], /^KBC::ProjectSecure::/);
      assert.deepEqual(replaced.state, { component: { since: 2 } });
      const rows = new Map<string, any>(replaced.rows.map((r: { id: string }) => [r.id, r]));
      assert.deepEqual(
        [...rows.keys()].filter((id) => id === 'a' || id === 'b' || id === 'c').sort(),
        ['a', 'c'],
        'b is gone',
      );
      assert.equal(rows.size, 3);
      assert.equal(rows.get('a').name, 'A2');
      assert.equal(rows.get('a').version, rowA.version + 1);
      assert.deepEqual(rows.get('a').state, { component: { a: 1 } }, 'a state not in the document is kept');
      assert.deepEqual(rows.get('c').state, { component: { c: 3 } });
      assert.deepEqual(replaced.rowsSortOrder, []);

      const after = await versions('shop');
      assert.equal(after.length, versionsBefore.length + 1);
      assert.equal(after[0].changeDescription, 'Replaced by an import from a file');

      // the document exported again replaces nothing: no version
      const exported = await file('exported.json', JSON.parse(await cli.ok(['configs', 'export', 'shop'])));
      assert.match(
        await cli.ok(['configs', 'import', exported, '--replace']),
        /^No change: configuration shop is the imported one already \(version \d+\)\.\n$/,
      );
      assert.equal((await versions('shop')).length, after.length);
      cli.assertNoSecretLeaked();
    });

    it('--replace is all or nothing: a document the store refuses (an order naming an unknown row) changes nothing', async () => {
      await cli.ok(['configs', 'import', await file('shop.json', SHOP)]);
      const before = await cli.ok(['configs', 'export', 'shop']);
      const broken = await file('broken.json', {
        ...SHOP,
        name: 'changed',
        rows: [SHOP.rows[0]],
        rowsSortOrder: ['a', 'b'],
      });
      assert.match(await cli.fails(['configs', 'import', broken, '--replace']), /rowsSortOrder/);
      const twice = await file('twice.json', { ...SHOP, rows: [SHOP.rows[0], SHOP.rows[0]], rowsSortOrder: [] });
      assert.match(await cli.fails(['configs', 'import', twice, '--replace']), /the row id "a" is given twice/);
      assert.equal(await cli.ok(['configs', 'export', 'shop']), before);
    });

    it('--replace of an id the store does not have creates it; a document from standard input ("-")', async () => {
      const created = await cli.json(['configs', 'import', '-', '--replace'], {}, JSON.stringify(SHOP));
      assert.equal(created.id, 'shop');
      assert.deepEqual(created.rowsSortOrder, ['b', 'a']);
      assert.match(
        await cli.fails(['configs', 'import', '-', '--replace'], {}, JSON.stringify({ name: 'no id' })),
        /--replace replaces the configuration named by the document's "configurationId", and this document has none/,
      );
      assert.match(
        await cli.fails(['configs', 'import', '-'], {}, '{"name": '),
        /^Error: standard input is not valid JSON: Syntax error: .* at (the end of the input \()?line 1, column 10/,
      );
    });

    it('refuses --new-id with --replace in one line, without the help text', async () => {
      const stderr = await cli.fails([
        'configs',
        'import',
        await file('shop.json', SHOP),
        '--new-id',
        'x',
        '--replace',
      ]);
      assert.equal(
        stderr,
        'Error: Arguments new-id and replace are mutually exclusive\nRun "gex configs import --help" for its options and examples.\n',
      );
    });
  });
}
