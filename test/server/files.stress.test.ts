import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writeBenchCsv } from '../../bench/table-load-bench.js';
import { runGex, startServe } from '../support/cli.js';
import { call } from '../support/serve-cluster.js';
import { downloadSize, peakRssMb, runJob, uploadFromDisk } from '../support/serve-files.js';
import { storeBackends, TEST_KEY } from '../support/store.js';

/**
 * gex serve's peak RSS while it takes, loads, exports and sends a file of ~200 MB (and a ~250 MB
 * export): bounded, not growing with the file. Measured: SQLite 250–300 MB, PostgreSQL 280–339 MB
 * (four CI runs of the same code: 315, 311, 318, 339) —
 * transient garbage of the export's CSV and of PostgreSQL's hex-encoded chunks that V8 collects
 * late, not data held (the import of a 103 MB file peaks as high as this 214 MB one;
 * docs/performance.md).
 */
const RSS_LIMIT_MB = 360;
const ROWS = 2_000_000;

for (const factory of storeBackends()) {
  describe(`File Storage streams both ways (${factory.name})`, function () {
    this.timeout(900_000);

    it(`uploads, imports, exports and downloads ~200 MB with gex serve's RSS under ${RSS_LIMIT_MB} MB`, async () => {
      const store = await factory.fresh();
      const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-files-stress-'));
      const served = await startServe(['--store', store.location, '--workers', '0'], TEST_KEY);
      try {
        const file = path.join(dir, 'rows.csv');
        await writeBenchCsv(file, ROWS, 0, 'stress');
        const size = (await stat(file)).size;
        assert.ok(size > 190 * 1024 * 1024, `the file has ${size} bytes`);
        const created = await runGex(
          ['tokens', 'create', '--description', 'stress', '--store', store.location],
          TEST_KEY,
        );
        const token = created.stdout.trim();
        const url = served.url;
        await call(url, token, 'POST', '/v2/storage/buckets', { name: 'stress', stage: 'in' });
        const stages: string[] = [`start ${await peakRssMb(served.child.pid!)}`];
        const fileId = await uploadFromDisk(url, token, file);
        stages.push(`upload ${await peakRssMb(served.child.pid!)}`);
        const detail = await call(url, token, 'GET', `/v2/storage/files/${fileId}`);
        assert.equal(detail.body.sizeBytes, size);
        assert.equal(await downloadSize(url, token, fileId), size);
        stages.push(`download ${await peakRssMb(served.child.pid!)}`);
        const imported = await runJob(url, token, '/v2/storage/buckets/in.c-stress/tables-async', {
          name: 'rows',
          dataFileId: fileId,
        });
        assert.equal(imported.totalRowsCount, ROWS);
        stages.push(`import ${await peakRssMb(served.child.pid!)}`);
        const exported = await runJob(url, token, '/v2/storage/tables/in.c-stress.rows/export-async', {});
        const exportId = (exported.file as { id: number }).id;
        stages.push(`export ${await peakRssMb(served.child.pid!)}`);
        const exportSize = (await call(url, token, 'GET', `/v2/storage/files/${exportId}`)).body.sizeBytes as number;
        assert.ok(exportSize > size, 'the export quotes every value');
        assert.equal(await downloadSize(url, token, exportId), exportSize);
        const peak = await peakRssMb(served.child.pid!);
        console.log(`      peak RSS (MB) after each step: ${stages.join(', ')}, end ${peak}`);
        assert.ok(peak < RSS_LIMIT_MB, `gex serve peaked at ${peak} MB`);
        console.log(`      ${factory.name}: ${Math.round(size / 1048576)} MB file, gex serve peak RSS ${peak} MB`);
      } finally {
        served.child.kill('SIGTERM');
        await once(served.child, 'exit');
        await rm(dir, { recursive: true, force: true });
        await store.dispose();
      }
    });
  });
}
