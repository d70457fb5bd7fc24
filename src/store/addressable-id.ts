import { StoreError } from './store-error.js';
import { KEBOOLA_ERRORS } from '../common/keboola-errors.js';

/**
 * The longest id (configuration, row, component) that can be used in a URL path: the server's
 * router refuses longer path parameters. Counted once URL-encoded (`encodeURIComponent`), as
 * clients send ids, so an id accepted at create can always be read, changed and deleted.
 */
export const MAX_ADDRESSABLE_ID_LENGTH = 1000;

/**
 * Why `id` could not be addressed in a URL (or stored everywhere), or undefined when it can: `.` and
 * `..` are path steps to every URL parser (`…/rows/../state` would name the configuration's
 * state), and PostgreSQL text cannot hold a NUL byte.
 */
export function addressableIdProblem(id: string): string | undefined {
  if (id === '.' || id === '..') return `is "${id}", which a URL reads as a path step, not a name`;
  if (id.includes('\u0000')) return 'contains a NUL byte, which no URL or database text can carry';
  const length = encodeURIComponent(id).length;
  if (length <= MAX_ADDRESSABLE_ID_LENGTH) return undefined;
  return `is ${length} characters long once URL-encoded; an id may be at most ${MAX_ADDRESSABLE_ID_LENGTH} characters URL-encoded, so that it can be used in a URL`;
}

/** Refuses (400) an id chosen by a client that could never be addressed again. `field` names it. */
export function requireAddressableId(
  id: string,
  field: string,
  code: string = KEBOOLA_ERRORS.componentsValidation.code,
): void {
  const problem = addressableIdProblem(id);
  if (problem) throw StoreError.validation(`Invalid parameters - ${field}: the id ${problem}.`, code);
}
