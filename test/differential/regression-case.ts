import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DiffCase } from './case-model.js';
import { logTail } from './engines.js';
import type { SideResult } from './run-case.js';

/**
 * A difference the tester found, frozen as a regression case: the shrunk case and what the
 * reference GE did with it (exit code, requests, output bytes). gex alone replays it later and must
 * do the same, so the fixture stays useful without the reference installed.
 */
export interface RegressionCase {
  seed: number;
  note?: string;
  case: DiffCase;
  reference: { code: number; requests: SideResult['requests']; outputs: Record<string, string>; log: string };
}

export async function saveRegression(dir: string, seed: number, c: DiffCase, reference: SideResult): Promise<void> {
  await mkdir(dir, { recursive: true });
  const saved: RegressionCase = {
    seed,
    case: c,
    reference: {
      code: reference.code,
      log: logTail(reference.log, 20),
      requests: reference.requests,
      outputs: Object.fromEntries([...reference.outputs].map(([name, bytes]) => [name, bytes.toString('base64')])),
    },
  };
  await writeFile(path.join(dir, `seed-${seed}.json`), `${JSON.stringify(saved, null, 1)}\n`);
}

export async function loadRegressions(dir: string): Promise<Array<{ file: string; saved: RegressionCase }>> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => ({
      file,
      saved: JSON.parse(await readFile(path.join(dir, file), 'utf8')) as RegressionCase,
    })),
  );
}

/** The recorded reference run as a SideResult, to compare with gex's run. */
export function referenceSide(saved: RegressionCase): SideResult {
  return {
    engine: 'ge (recorded)',
    code: saved.reference.code,
    timedOut: false,
    log: saved.reference.log,
    requests: saved.reference.requests,
    outputs: new Map(
      Object.entries(saved.reference.outputs).map(([name, base64]) => [name, Buffer.from(base64, 'base64')]),
    ),
  };
}
