import assert from 'node:assert/strict';
import { DatabaseUnavailable } from '../../src/store/sql/database.js';
import { openEmbeddedStore } from '../support/open-store.js';
import { runGex } from '../support/cli.js';
import { TEST_KEY } from '../support/store.js';
import { closedPort } from '../support/tcp-proxy.js';

/** A PostgreSQL store nobody answers for: no PostgreSQL server is needed for these. */
describe('PostgreSQL store unreachable', () => {
  let url: string;
  before(async () => {
    url = `postgres://gex:s3cret-pw@127.0.0.1:${await closedPort()}/gex`;
  });

  it('opening fails with DatabaseUnavailable (503 storage.databaseUnavailable), without the password', async () => {
    await assert.rejects(openEmbeddedStore(url, TEST_KEY), (e: unknown) => {
      assert.ok(e instanceof DatabaseUnavailable, String(e));
      assert.equal(e.status, 503);
      assert.equal(e.code, 'storage.databaseUnavailable');
      assert.match(e.message, /database unavailable \(postgres:\/\/gex:\*\*\*@127\.0\.0\.1:\d+\/gex\): .*ECONNREFUSED/);
      assert.ok(!e.message.includes('s3cret-pw'));
      return true;
    });
  });

  for (const args of [
    ['configs', 'list'],
    ['serve', '--port', '0'],
    ['run', '--config-id', '1'],
  ]) {
    it(`gex ${args[0]} exits 1 with one clear line`, async () => {
      const result = await runGex([...args, '--store', url], { ...TEST_KEY, GEX_LOG_FORMAT: 'text' });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      const output = result.stdout + result.stderr;
      assert.match(
        output,
        /Storage database unavailable \(postgres:\/\/gex:\*\*\*@127\.0\.0\.1:\d+\/gex\): connect ECONNREFUSED/,
      );
      assert.ok(!output.includes('s3cret-pw'), 'the password is not printed');
      assert.ok(!/\n\s+at /.test(output), 'no stack trace');
    });
  }
});
