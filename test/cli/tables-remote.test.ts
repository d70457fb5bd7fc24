import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StoreCli } from '../support/store-cli.js';

const TOKEN = 'remote-token-1';

/** A table as Keboola's Storage API describes it. */
function table(id: string, rowsCount: number) {
  const [stage, bucket, name] = id.split('.');
  return {
    id,
    name,
    displayName: name,
    primaryKey: ['id'],
    columns: ['id', 'name'],
    rowsCount,
    dataSizeBytes: 1,
    isAlias: false,
    created: '2025-01-01T00:00:00+0100',
    lastImportDate: '2025-01-02T00:00:00+0100',
    lastChangeDate: '2025-01-03T00:00:00+0100',
    attributes: [],
    metadata: [],
    columnMetadata: {},
    bucket: { id: `${stage}.${bucket}`, name: bucket, stage },
  };
}
const TABLES = [table('in.c-shop.users', 2), table('in.c-shop.big', 5000)];
const PREVIEWS: Record<string, string> = {
  'in.c-shop.users': '"id","name"\n"1","evil\u001b[2J\u001b[31m"\n"2","b"\n',
  'in.c-shop.big': `"id","name"\n${Array.from({ length: 1000 }, (_, i) => `"${i}","x"\n`).join('')}`,
};

/**
 * A Storage API speaking Keboola's table endpoints from fixed answers, over real HTTP: what
 * `gex tables` sends to a remote store (gex serve or a Keboola stack).
 */
async function startKeboolaLike(): Promise<{ server: Server; url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url!, 'http://x');
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (req.headers['x-storageapi-token'] !== TOKEN)
      return json(401, { error: 'Invalid access token', code: 'storage.tokenInvalid' });
    const p = decodeURIComponent(url.pathname);
    const tableId = /^\/v2\/storage\/tables\/([^/]+)/.exec(p)?.[1];
    const known = TABLES.find((t) => t.id === tableId);
    if (req.method === 'GET' && p === '/v2/storage/tables') return json(200, TABLES);
    if (req.method === 'GET' && p === '/v2/storage/buckets/in.c-shop/tables') return json(200, TABLES);
    if (tableId && !known)
      return json(404, {
        error: `The table "${tableId}" was not found in the bucket.`,
        code: 'storage.tables.notFound',
      });
    if (req.method === 'GET' && p.endsWith('/data-preview'))
      return res.writeHead(200, { 'Content-Type': 'text/csv' }).end(PREVIEWS[tableId!]);
    if (req.method === 'GET' && known) return json(200, known);
    if (req.method === 'DELETE' && (known || p === '/v2/storage/buckets/in.c-shop')) return res.writeHead(204).end();
    return json(404, { error: 'Not found', code: 'notFound' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

describe('gex tables on a remote store (Keboola table API over HTTP)', function () {
  this.timeout(60_000);
  let api: Awaited<ReturnType<typeof startKeboolaLike>>;
  let dir: string;
  let cli: StoreCli;

  before(async () => {
    api = await startKeboolaLike();
  });
  after(() => new Promise<void>((resolve) => api.server.close(() => resolve())));
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tables-remote-'));
    cli = new StoreCli({ KBC_URL: api.url, KBC_TOKEN: TOKEN, GEX_STORE: '' }, dir);
    api.requests.length = 0;
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('lists, shows and previews with the same output as the embedded store, values made safe', async () => {
    assert.deepEqual(
      (await cli.ok(['tables', 'list']))
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t').slice(0, 3)),
      [
        ['in.c-shop.big', '5,000 rows', '2 columns'],
        ['in.c-shop.users', '2 rows', '2 columns'],
      ],
    );
    assert.equal(api.requests[0], 'GET /v2/storage/tables?include=columns');
    assert.match(await cli.ok(['tables', 'show', 'in.c-shop.users']), /primary key {2}id\n {2}rows {9}2\n/);
    const preview = await cli.ok([
      'tables',
      'preview',
      'in.c-shop.users',
      '--where-column',
      'id',
      '--where-values',
      '1,2',
      '--changed-since',
      '0',
    ]);
    assert.ok(!/[\u001b]/.test(preview), preview);
    assert.match(preview, /^id {2}name\n-- {2}-+\n1 {3}evil\\u001b\[2J\\u001b\[31m\n2 {3}b\n\(2 rows\)\n$/);
    assert.equal(
      api.requests.at(-1),
      'GET /v2/storage/tables/in.c-shop.users/data-preview?limit=100&whereColumn=id&whereValues%5B%5D=1&whereValues%5B%5D=2&whereOperator=eq&changedSince=0',
    );
    assert.match(
      await cli.fails(['tables', 'show', 'in.c-shop.none']),
      /Table in\.c-shop\.none does not exist in the project of the Storage API at http:\/\/127\.0\.0\.1:\d+ \(The table \\?"?in\.c-shop\.none/,
    );
    assert.match(
      await cli.fails(['tables', 'list'], { KBC_TOKEN: 'wrong' }),
      /The Storage API at http:\/\/[\w.:]+ refused the token( from KBC_TOKEN)?: Invalid access token \[storage\.tokenInvalid\]\. Pass a valid token with --token \(or set KBC_TOKEN\)\./,
    );
    cli.assertNoSecretLeaked(TOKEN);
  });

  it('exports a table that fits a preview; refuses one that does not, writing nothing', async () => {
    assert.match(await cli.ok(['tables', 'export', 'in.c-shop.users', '--output', 'users.csv']), /Exported 2 rows/);
    assert.equal(await readFile(path.join(dir, 'users.csv'), 'utf8'), PREVIEWS['in.c-shop.users']);
    assert.equal(JSON.parse(await readFile(path.join(dir, 'users.csv.manifest'), 'utf8')).rows_count, 2);
    const refused = await cli.fails(['tables', 'export', 'in.c-shop.big', '--output', 'big.csv']);
    assert.match(
      refused,
      /Table in\.c-shop\.big has 5000 rows, and the Storage API at .* returns at most 1000 rows over HTTP \(data-preview\): gex does not write a partial export/,
    );
    assert.deepEqual((await readdir(dir)).sort(), ['users.csv', 'users.csv.manifest']);
    // within a preview's limit it is complete
    await cli.ok(['tables', 'export', 'in.c-shop.big', '--output', 'big.csv', '--limit', '1000']);
    assert.equal((await readFile(path.join(dir, 'big.csv'), 'utf8')).split('\n').length, 1002);
  });

  it('deletes a table, and a bucket with --force only', async () => {
    assert.equal(await cli.ok(['tables', 'delete', 'in.c-shop.users']), 'Deleted table in.c-shop.users.\n');
    assert.equal(api.requests.at(-1), 'DELETE /v2/storage/tables/in.c-shop.users');
    assert.match(
      await cli.fails(['tables', 'delete', '--bucket', 'in.c-shop']),
      /Bucket in\.c-shop has 2 tables \(in\.c-shop\.big, in\.c-shop\.users\): add --force/,
    );
    assert.ok(!api.requests.some((r) => r.startsWith('DELETE /v2/storage/buckets')), 'nothing deleted without --force');
    await cli.ok(['tables', 'delete', '--bucket', 'in.c-shop', '--force']);
    assert.equal(api.requests.at(-1), 'DELETE /v2/storage/buckets/in.c-shop?force=1');
  });
});
