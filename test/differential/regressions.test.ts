import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compareSides, requestOrderOf } from './compare.js';
import { explainingDeviation } from './deviations.js';
import { gexInProcessEngine } from './engines.js';
import { loadRegressions, referenceSide } from './regression-case.js';
import { runCase } from './run-case.js';

/** Cases the differential tester found, with GE's recorded result: gex alone must match each. */
const folder = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'test',
  'differential',
  'regressions',
);
const regressions = await loadRegressions(folder);

describe("differential regressions: shrunk cases with the reference GE's recorded result", function () {
  this.timeout(60_000);
  let workDir: string;
  before(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'gex-regressions-'));
  });
  after(() => rm(workDir, { recursive: true, force: true }));

  it('has recorded cases to replay', () => {
    assert.ok(regressions.length > 0);
  });

  for (const { file, saved } of regressions) {
    it(`${file}${saved.note ? `: ${saved.note}` : ''}`, async () => {
      const [gex] = await runCase(saved.case, [gexInProcessEngine()], workDir, 30_000);
      const reference = referenceSide(saved);
      const differences = compareSides(reference, gex, requestOrderOf(saved.case.parameters));
      const deviation = explainingDeviation(reference, gex, differences);
      assert.deepEqual(deviation ? [] : differences.map((d) => d.detail), [], gex.log.slice(-2000));
    });
  }
});
