import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runDifferential } from './differential.js';
import { GE_REFERENCE_VARIABLE, gexEngine, referenceCommand, referenceEngine } from './engines.js';
import { describeCase } from './report.js';

/** The fixed seeds of the smoke run: the same cases every time, so a red run is a regression. */
export const SMOKE_SEED = 20_261_123;
export const SMOKE_CASES = 40;

/**
 * The smoke run's cases `from` .. `to - 1` (of SMOKE_CASES consecutive seeds) against the reference
 * GE; npm test runs the first ones, npm run test:stress the rest.
 */
export function describeSmokeRun(from: number, to: number): void {
  describe(`differential smoke run against the reference Generic Extractor (cases ${from}–${to - 1})`, function () {
    this.timeout(300_000);
    const command = referenceCommand();

    before(function () {
      if (!command) {
        console.warn(
          `\n  !!! SKIPPED the differential smoke run: ${GE_REFERENCE_VARIABLE} is not set (it names the command that ` +
            'runs the reference GE on a data folder; see docs/differential-testing.md)\n',
        );
        this.skip();
      }
    });

    it(`${to - from} generated cases give GE's exit codes, requests and output bytes (or a listed deviation)`, async () => {
      const workDir = await mkdtemp(path.join(os.tmpdir(), 'gex-differential-smoke-'));
      try {
        const reports = await runDifferential({
          seed: SMOKE_SEED + from,
          cases: to - from,
          parallel: 2,
          shrinkRuns: 0,
          timeoutMs: 60_000,
          workDir,
          reference: referenceEngine(command!),
          gex: gexEngine(),
        });
        const different = reports.filter((r) => r.outcome === 'different');
        const described = different.map((r) => describeCase(r.seed, r.shrunk!.case, r.differences, r.shrunk!.logs));
        assert.equal(different.length, 0, described.join('\n\n'));
        assert.equal(reports.length, to - from);
      } finally {
        await rm(workDir, { recursive: true, force: true });
      }
    });
  });
}
