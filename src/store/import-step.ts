import { displayId } from '../common/log-text.js';

/** Which step of a configuration import failed, for the message: `Import failed at rows[2] (id a): …`. */
export class ImportStepFailed extends Error {
  constructor(
    readonly step: string,
    readonly failure: unknown,
  ) {
    super(step);
    this.name = 'ImportStepFailed';
  }
}

export const CONFIGURATION_STEP = 'creating the configuration';
export const ORDER_STEP = 'rowsSortOrder';

/** The step of the document's row `index`. */
export function rowStep(index: number, rowId: string | undefined): string {
  return `rows[${index}]${rowId === undefined ? '' : ` (id ${displayId(rowId)})`}`;
}

/** Runs `work`; what it throws comes out as the failure of step `name` (one already named keeps its step). */
export async function importStep<T>(name: string, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof ImportStepFailed ? error : new ImportStepFailed(name, error);
  }
}
