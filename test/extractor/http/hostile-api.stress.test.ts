import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { makeDataDir } from '../../support/extraction.js';
import { startGzipBombServer, type HostileServer } from '../../support/hostile-server.js';
import { gexRunPeakRss as gexRun, oneJob as job } from '../../support/peak-rss-run.js';

/**
 * STRESS (npm run test:stress): the gzip bomb against the default response limit — gex decompresses
 * 256 MiB before it stops. npm test runs the same bomb with an 8 MiB limit (hostile-api.test.ts).
 */
describe('a hostile API: a gzip bomb (10 MB of gzip → 10 GiB of JSON) against the default limit', function () {
  this.timeout(120_000);
  let bomb: HostileServer;
  let plain: http.Server;
  let baselineMiB: number;

  before(async () => {
    bomb = await startGzipBombServer(10 * 1024);
    plain = http.createServer((_req, res) => res.end('[{"id":1}]'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
    // the peak RSS of the same command on a harmless API: what the bomb may add to is measured from here
    const dir = await makeDataDir(job(plainUrl, 'items'));
    try {
      const run = await gexRun(dir);
      assert.equal(run.code, 0, run.output);
      baselineMiB = run.peakRssMiB;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  after(async () => {
    await bomb.close();
    plain.closeAllConnections();
    await new Promise<void>((resolve) => plain.close(() => resolve()));
  });

  it('with the default limit: exit 1 at 256 MiB, peak RSS far below the 10 GiB the bomb holds', async () => {
    const dir = await makeDataDir(job(bomb.url, 'bomb'));
    try {
      const run = await gexRun(dir);
      assert.equal(run.code, 1, run.output);
      assert.match(
        run.output,
        /is too large: over 256 MiB once decompressed, the limit of one response\. .*raise GEX_MAX_RESPONSE_SIZE/,
      );
      assert.ok(
        run.peakRssMiB - baselineMiB < 256 + 96,
        `peak RSS ${run.peakRssMiB.toFixed(0)} MiB (baseline ${baselineMiB.toFixed(0)} MiB)`,
      );
      console.log(`      gzip bomb, default limit 256 MiB: peak RSS ${run.peakRssMiB.toFixed(0)} MiB`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
