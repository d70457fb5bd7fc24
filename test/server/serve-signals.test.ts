import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openEmbeddedStore } from '../support/open-store.js';
import { gexBin } from '../support/cli.js';
import { startGex } from '../support/gex-process.js';

describe('gex serve: stop signals as PID 1 (unshare --pid --fork, no init)', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gex-serve-pid1-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} closes the server and the store, exit 0`, async () => {
      const store = path.join(dir, 'store.sqlite');
      const serve = startGex(
        ['serve', '--port', '0', '--store', store],
        {},
        { command: ['unshare', '--pid', '--fork', process.execPath, gexBin] },
      );
      await serve.waitFor(/listening on (http:\/\/[^\s/]+)\/v2\/storage/);
      const url = /listening on (http:\/\/[^\s/]+)\/v2\/storage/.exec(serve.output())![1];
      const unsharePid = serve.child.pid!;
      const gexPid = Number(readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim());
      try {
        // it answers (401: token verification without a token)
        assert.equal((await fetch(`${url}/v2/storage/tokens/verify`)).status, 401);
        assert.match(readFileSync(`/proc/${gexPid}/status`, 'utf8'), /^NSpid:\s+\d+\s+1$/m);
      } finally {
        process.kill(gexPid, signal);
      }
      assert.equal((await serve.exited).code, 0, serve.output());
      assert.match(serve.output(), new RegExp(`${signal} received: stopping`));
      await assert.rejects(fetch(`${url}/v2/storage`));
      // the store was closed cleanly: it opens again at once (no lock, WAL checkpointed)
      const backend = await openEmbeddedStore(store);
      await backend.close();
    });
  }
});
