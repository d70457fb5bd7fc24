import fc from 'fast-check';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DiffCase } from './case-model.js';
import { compareSides, requestOrderOf, signature, type Difference } from './compare.js';
import { explainingDeviation } from './deviations.js';
import { logTail, type Engine } from './engines.js';
import { diffCaseArb } from './generate/case.js';
import { runCase, type SideResult } from './run-case.js';

export interface DifferentialOptions {
  seed: number;
  cases: number;
  /** cases run at the same time (each runs GE, then gex) */
  parallel: number;
  /** the most extra runs spent shrinking one difference */
  shrinkRuns: number;
  timeoutMs: number;
  workDir: string;
  /** keep the data folders of the last run of each slot */
  keep?: boolean;
  reference: Engine;
  gex: Engine;
  onCase?: (report: CaseReport, done: number) => void;
}

export interface CaseReport {
  /** the case's seed: `--seed S --cases 1` replays it */
  seed: number;
  outcome: 'same' | 'deviation' | 'different';
  deviation?: string;
  differences: Difference[];
  /** the smallest case found that still shows the first difference */
  shrunk?: {
    case: DiffCase;
    differences: Difference[];
    runs: number;
    logs: { ge: string; gex: string };
    reference: SideResult;
  };
}

/** Generates `cases` cases from consecutive seeds and runs each on both engines. */
export async function runDifferential(options: DifferentialOptions): Promise<CaseReport[]> {
  const reports: CaseReport[] = new Array(options.cases);
  let next = 0;
  let done = 0;
  const worker = async (slot: number) => {
    while (next < options.cases) {
      const index = next++;
      const workDir = path.join(options.workDir, `slot-${slot}`);
      await mkdir(workDir, { recursive: true });
      reports[index] = await runOneCase(options.seed + index, options, workDir);
      options.onCase?.(reports[index], ++done);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.parallel) }, (_, slot) => worker(slot)));
  if (!options.keep) await rm(options.workDir, { recursive: true, force: true });
  return reports;
}

/** The case generated from a seed (what `runOneCase` runs first). */
export function caseOfSeed(seed: number): DiffCase {
  return fc.sample(diffCaseArb, { seed, numRuns: 1 })[0];
}

/**
 * Runs the case of one seed; on a difference, fast-check shrinks it: a smaller case is kept when it
 * shows a difference with the same signature, until the shrink budget is spent (then every further
 * candidate "passes", which ends shrinking with the smallest case found).
 */
export async function runOneCase(
  seed: number,
  options: Omit<DifferentialOptions, 'seed' | 'cases' | 'parallel'>,
  workDir: string,
): Promise<CaseReport> {
  let report: CaseReport | undefined;
  let wanted: string | null = null;
  let shrinkRuns = 0;
  const property = fc.asyncProperty(diffCaseArb, async (c) => {
    if (report && shrinkRuns >= options.shrinkRuns) return true;
    if (report) shrinkRuns++;
    const [reference, gex] = await runCase(c, [options.reference, options.gex], workDir, options.timeoutMs);
    const differences = compareSides(reference, gex, requestOrderOf(c.parameters));
    if (!report) {
      const deviation = explainingDeviation(reference, gex, differences);
      report = {
        seed,
        outcome: differences.length === 0 ? 'same' : deviation ? 'deviation' : 'different',
        ...(deviation ? { deviation: deviation.id } : {}),
        differences,
      };
      if (report.outcome !== 'different') return true;
      wanted = signature(differences);
      report.shrunk = shrunkOf(c, differences, 0, reference, gex);
      return false;
    }
    if (signature(differences) !== wanted || explainingDeviation(reference, gex, differences)) return true;
    report.shrunk = shrunkOf(c, differences, shrinkRuns, reference, gex);
    return false;
  });
  await fc.check(property, { seed, numRuns: 1 });
  return report!;
}

function shrunkOf(
  c: DiffCase,
  differences: Difference[],
  runs: number,
  reference: SideResult,
  gex: SideResult,
): NonNullable<CaseReport['shrunk']> {
  return { case: c, differences, runs, logs: { ge: logTail(reference.log), gex: logTail(gex.log) }, reference };
}
