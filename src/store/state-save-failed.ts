import { displayId } from '../common/log-text.js';

/** A state's owner in saveStates: a row id, or null for the configuration's own state. */
export type StateOwner = string | null;

export function stateOwnerText(owner: StateOwner): string {
  return owner === null ? 'the configuration' : `row ${displayId(owner)}`;
}

/**
 * Saving several states one by one (a remote Storage API) failed part-way. The states saved before
 * the failure were put back to their previous values, as far as that worked: `restored` were put
 * back, `notRestored` keep the new state (or, for the one whose save failed without an answer, an
 * unknown one) and say why. `failure` is the error of the save that failed; its kind (user or
 * application) is the run's.
 */
export class StateSaveFailed extends Error {
  readonly gexCode = 'GEX_STATE_SAVE_FAILED';
  constructor(
    readonly failed: StateOwner,
    readonly failure: unknown,
    readonly restored: StateOwner[],
    readonly notRestored: Array<{ owner: StateOwner; reason: string }>,
  ) {
    const reason = (failure as Error)?.message ?? String(failure);
    const outcome =
      notRestored.length === 0
        ? `the states saved before it were put back (${restored.map(stateOwnerText).join(', ') || 'none'})`
        : `these could not be put back and may hold the new state: ${notRestored.map((n) => `${stateOwnerText(n.owner)} (${n.reason})`).join(', ')}`;
    super(`Saving the state of ${stateOwnerText(failed)} failed: ${reason}; ${outcome}`, { cause: failure });
    this.name = 'StateSaveFailed';
  }
}
