import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { UserError } from '../../../src/common/errors.js';
import { HttpConfigStore } from '../../../src/store/remote/http-config-store.js';
import { runGex } from '../../support/cli.js';
import { assertOneLine, silentServer } from '../../support/unreachable-store.js';

describe('gex configs against an unreachable remote store (real processes)', function () {
  this.timeout(60_000);

  // a refused port, retried for the whole interactive budget (~16 s): remote-store-network.stress.test.ts
  it('a server that accepts the connection and never answers: times out within the budget (GEX_STORE_TIMEOUT=3)', async () => {
    const server = await silentServer();
    try {
      const started = Date.now();
      const result = await runGex(['configs', 'list', '--store', server.url, '--token', 'tok'], {
        GEX_STORE_TIMEOUT: '3',
      });
      const seconds = (Date.now() - started) / 1000;
      assert.equal(result.code, 1, result.stderr);
      assertOneLine(result.stderr, result.stdout);
      assert.match(
        result.stderr,
        new RegExp(`^Error: The Storage API at ${server.url} cannot be reached: no answer within 3 s\\n$`),
      );
      // the message names the budget that ended the call; it waited that long at least (no upper
      // bound: on a loaded machine one would measure the machine)
      assert.ok(seconds >= 3, `took ${seconds} s`);
    } finally {
      await server.close();
    }
  });
});

describe('remote store: the token never goes to another origin', () => {
  interface Seen {
    url: string;
    token: string | undefined;
  }
  async function origin(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
    const seen: Seen[] = [];
    const server = http.createServer((req, res) => {
      seen.push({ url: req.url!, token: req.headers['x-storageapi-token'] as string | undefined });
      handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      seen,
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }
  const verified = (res: http.ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"id":"1","description":"t","owner":{"id":"5","name":"p"}}');
  };

  it('a redirect from origin A to origin B is refused with a clear error; B never sees the token', async () => {
    const b = await origin((_req, res) => verified(res));
    const a = await origin((req, res) => {
      res.writeHead(307, { Location: `${b.url}${req.url}` });
      res.end();
    });
    try {
      const store = new HttpConfigStore({ url: a.url, token: 'secret-token-1', retryBaseMs: 1 });
      await assert.rejects(store.verifyToken(), (e: Error) => {
        assert.ok(e instanceof UserError);
        assert.equal(
          e.message,
          `The Storage API at ${a.url} redirected GET v2/storage/tokens/verify to another origin, ${b.url}; gex does not send the token there. If that is the right address, use it as --store (KBC_URL).`,
        );
        return true;
      });
      assert.deepEqual(a.seen, [{ url: '/v2/storage/tokens/verify', token: 'secret-token-1' }]);
      assert.deepEqual(b.seen, []);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a same-origin redirect is followed with the token', async () => {
    const a = await origin((req, res) => {
      if (req.url === '/v2/storage/tokens/verify') {
        res.writeHead(301, { Location: '/moved/v2/storage/tokens/verify' });
        return res.end();
      }
      verified(res);
    });
    try {
      const store = new HttpConfigStore({ url: a.url, token: 'secret-token-2', retryBaseMs: 1 });
      assert.equal((await store.verifyToken()).projectId, 5);
      assert.deepEqual(a.seen, [
        { url: '/v2/storage/tokens/verify', token: 'secret-token-2' },
        { url: '/moved/v2/storage/tokens/verify', token: 'secret-token-2' },
      ]);
    } finally {
      await a.close();
    }
  });
});
