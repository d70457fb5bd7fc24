import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startServe } from '../support/cli.js';
import { freshBucket, swiftOrSkip, type Swift, type TestBucket } from '../support/object-store.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { StoreCli } from '../support/store-cli.js';

/** Lines of `gex serve`'s request log for `method` on a path matching `route`. */
function requests(log: string, method: string, route: RegExp): string[] {
  return log.split('\n').filter((line) => line.includes(`method=${method} `) && route.test(line));
}

/**
 * `gex tables import` and `export` against a real `gex serve --file-storage s3://…`: the bytes go
 * from the client straight to the bucket (one pre-signed PUT, or a multipart upload for a file over
 * the direct PUT limit) and back from it at a pre-signed address: no byte of them passes the server.
 */
describe('gex tables against gex serve with its files in an object store (real Swift)', function () {
  this.timeout(120_000);
  let swift: Swift;
  let dir: string;
  let bucket: TestBucket | undefined;

  before(async function () {
    swift = await swiftOrSkip(this);
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-tables-s3-'));
  });
  after(async () => {
    await bucket?.remove();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('imports a small and a multipart file straight into the bucket and exports through a pre-signed GET', async () => {
    bucket = await freshBucket(swift, 'gex/');
    const store = path.join(dir, 'store.sqlite');
    const backend = await openEmbeddedStore(store);
    let token: string;
    try {
      token = (await backend.createToken({ description: 'cli' })).token;
    } finally {
      await backend.close();
    }
    const { child, url, output } = await startServe(['--store', store, '--file-storage', `s3://${bucket.name}/gex`], {
      AWS_ENDPOINT_URL: swift.endpoint,
      AWS_REGION: swift.region,
      AWS_ACCESS_KEY_ID: swift.accessKeyId,
      AWS_SECRET_ACCESS_KEY: swift.secretAccessKey,
      GEX_LOG_FORMAT: 'text',
    });
    try {
      const cli = new StoreCli({ KBC_URL: url, KBC_TOKEN: token, GEX_STORE: '' }, dir);
      const small = path.join(dir, 'small.csv');
      await writeFile(small, 'id,name\n1,Ann\n2,"Bob, Jr."\n3,"line\nbreak"\n');
      await cli.ok(['tables', 'import', small, '--table', 'in.c-shop.small', '--primary-key', 'id']);

      // ~40 MB: over the direct PUT limit, so sent in parts
      const big = path.join(dir, 'big.csv');
      const row = (i: number) => `${i},${'x'.repeat(90)},${i % 7}\n`;
      const lines: string[] = ['id,text,group\n'];
      for (let i = 1; i <= 400_000; i++) lines.push(row(i));
      await writeFile(big, lines.join(''));
      const bigSize = (await stat(big)).size;
      assert.ok(bigSize > 33 * 1024 * 1024, `a file over the direct PUT limit (${bigSize} bytes)`);
      await cli.ok(['tables', 'import', big, '--table', 'in.c-shop.big']);

      const shown = await cli.json(['tables', 'show', 'in.c-shop.big']);
      assert.equal(shown.rowsCount, 400_000);
      await cli.ok(['tables', 'export', 'in.c-shop.small', '--output', 'small-out.csv']);
      assert.equal(
        await readFile(path.join(dir, 'small-out.csv'), 'utf8'),
        '"id","name"\n"1","Ann"\n"2","Bob, Jr."\n"3","line\nbreak"\n',
      );
      const log = output();
      assert.deepEqual(
        requests(log, 'PUT', /url=\/v2\/storage\/files\/\d+\/content/),
        [],
        'no upload through the server',
      );
      assert.deepEqual(
        requests(log, 'GET', /url=\/v2\/storage\/files\/\d+\/content/),
        [],
        'no download through the server',
      );
      assert.equal(requests(log, 'POST', /url=\/v2\/storage\/files\/\d+\/upload-complete .*status=200/).length, 2, log);
      for (const text of [log, ...cli.outputs])
        assert.doesNotMatch(text, /X-Amz-Signature=(?!\*\*\*)[0-9a-f]|X-Amz-Credential=(?!\*\*\*)\w/);
      assert.ok(!log.includes(swift.secretAccessKey) && !cli.outputs.join('').includes(swift.secretAccessKey));
    } finally {
      child.kill('SIGTERM');
    }
  });
});
