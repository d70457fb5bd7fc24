import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runDifferential } from './differential.js';
import { GE_REFERENCE_VARIABLE, gexEngine, referenceCommand, referenceEngine } from './engines.js';
import { describeCase } from './report.js';

/** The fixed seeds of the smoke run: the same cases every time, so a red run is a regression. */
const SMOKE_SEED = 20_261_123;
const SMOKE_CASES = 40;

describe('differential smoke run against the reference Generic Extractor', function () {
  this.timeout(300_000);
  const command = referenceCommand();

  before(function () {
    if (!command) {
      console.warn(`\n  !!! SKIPPED the differential smoke run: ${GE_REFERENCE_VARIABLE} is not set (it names the command that runs the reference GE on a data folder; see docs/differential-testing.md)\n`);
      this.skip();
    }
  });

  it(`${SMOKE_CASES} generated cases give GE's exit codes, requests and output bytes (or a listed deviation)`, async () => {
    const workDir = await mkdtemp(path.join(os.tmpdir(), 'gex-differential-smoke-'));
    try {
      const reports = await runDifferential({
        seed: SMOKE_SEED,
        cases: SMOKE_CASES,
        parallel: 2,
        shrinkRuns: 0,
        timeoutMs: 60_000,
        workDir,
        reference: referenceEngine(command!),
        gex: gexEngine(),
      });
      const different = reports.filter((r) => r.outcome === 'different');
      assert.equal(different.length, 0, different.map((r) => describeCase(r.seed, r.shrunk!.case, r.differences, r.shrunk!.logs)).join('\n\n'));
      assert.equal(reports.length, SMOKE_CASES);
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });
});
