import assert from 'node:assert/strict';
import { runGex } from '../../support/cli.js';
import { assertOneLine, refusingPort } from '../../support/unreachable-store.js';

/** STRESS (npm run test:stress): waits out the whole retry budget of an interactive command. */
describe('gex configs against a remote store on a refused port (a real process)', function () {
  this.timeout(60_000);

  it('a refused port: exit 1, one line naming the store, within the interactive budget (20 s)', async () => {
    const url = `http://127.0.0.1:${await refusingPort()}`;
    const started = Date.now();
    const result = await runGex(['configs', 'list', '--store', url, '--token', 'tok']);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(result.code, 1, result.stderr);
    assertOneLine(result.stderr, result.stdout);
    assert.match(
      result.stderr,
      new RegExp(
        `^Error: The Storage API at ${url} cannot be reached: connect ECONNREFUSED .* \\(6 attempts in 1\\d\\.\\d s\\)\\n$`,
      ),
    );
    assert.ok(seconds < 25, `took ${seconds} s`);
    console.log(`      refused store: gex configs list failed after ${seconds.toFixed(1)} s`);
  });
});
