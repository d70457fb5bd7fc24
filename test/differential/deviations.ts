import type { Difference } from './compare.js';
import type { SideResult } from './run-case.js';

/**
 * Differences gex has on purpose. Each names the README's "Deliberate differences from Generic
 * Extractor" entry it stands for; a case whose every difference one of them explains counts as a
 * deviation, not a failure.
 */
export interface Deviation {
  id: string;
  readme: string;
  explains(reference: SideResult, gex: SideResult, differences: Difference[]): boolean;
}

const gexRefusedBeforeSending = (gex: SideResult) => gex.code === 1 && gex.requests.length === 0;

export const DEVIATIONS: Deviation[] = [
  {
    id: 'config-error-instead-of-crash',
    readme: 'Values GE crashes on with PHP type errors (exit 2) are configuration errors here (exit 1) with the JSON path',
    explains: (reference, gex) => reference.code === 2 && gexRefusedBeforeSending(gex) && /configuration|config\.json|parameters\./i.test(gex.log),
  },
  {
    id: 'state-file-not-an-object',
    readme: 'Values GE crashes on with PHP type errors (exit 2) are configuration errors here (exit 1): a state file that is not a JSON object',
    explains: (reference, gex) => reference.code === 2 && gexRefusedBeforeSending(gex) && /state file .* must hold a JSON object/.test(gex.log),
  },
  {
    id: 'invalid-configuration-refused',
    readme: 'Invalid configurations GE would silently run with are refused with a message',
    explains: (_reference, gex) => gexRefusedBeforeSending(gex) && /parameters\.[^ ]*(limit|pages)/.test(gex.log),
  },
  {
    id: 'configuration-checked-before-requests',
    readme: 'A configuration is checked before the first request: where GE fails (exit 1) only when it reaches the bad part, gex fails (exit 1) before sending anything',
    explains: (reference, gex) => reference.code === 1 && gexRefusedBeforeSending(gex) && /Invalid configuration at/.test(gex.log),
  },
];

export function explainingDeviation(reference: SideResult, gex: SideResult, differences: Difference[]): Deviation | undefined {
  if (differences.length === 0) return undefined;
  return DEVIATIONS.find((d) => d.explains(reference, gex, differences));
}
