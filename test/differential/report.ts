import { BASE_URL, type DiffCase } from './case-model.js';
import type { Difference } from './compare.js';
import type { CaseReport } from './differential.js';
import { toJsonText } from './json-text.js';

/** The counts of a run: same, explained by a listed deviation, different (by signature). */
export function summarize(reports: CaseReport[]): string {
  const same = reports.filter((r) => r.outcome === 'same').length;
  const deviations = new Map<string, number>();
  const different = new Map<string, number>();
  for (const r of reports) {
    if (r.outcome === 'deviation') deviations.set(r.deviation!, (deviations.get(r.deviation!) ?? 0) + 1);
    if (r.outcome === 'different')
      different.set(r.differences[0].where, (different.get(r.differences[0].where) ?? 0) + 1);
  }
  const lines = [
    `${reports.length} cases: ${same} same, ${sum(deviations)} listed deviations, ${sum(different)} different`,
  ];
  for (const [id, n] of deviations) lines.push(`  deviation ${id}: ${n}`);
  for (const [where, n] of [...different].sort((a, b) => b[1] - a[1])) lines.push(`  different (${where}): ${n}`);
  return lines.join('\n');
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** A difference as a reader needs it: the shrunk data folder, the API, what differs, both logs. */
export function describeCase(
  seed: number,
  c: DiffCase,
  differences: Difference[],
  logs?: { ge: string; gex: string },
): string {
  const parts = [`=== seed ${seed}`];
  parts.push(
    `--- config.json\n${toJsonText({ parameters: c.parameters }, '  ').replaceAll(BASE_URL, 'http://127.0.0.1:PORT')}`,
  );
  if (c.state !== undefined) parts.push(`--- in/state.json\n${toJsonText(c.state)}`);
  parts.push(`--- API model\n${toJsonText(c.api as never, '  ')}`);
  parts.push(`--- differences\n${differences.map((d) => d.detail).join('\n')}`);
  if (logs) parts.push(`--- GE log (end)\n${logs.ge.trim()}\n--- gex log (end)\n${logs.gex.trim()}`);
  return parts.join('\n');
}
