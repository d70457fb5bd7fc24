import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';
import { excerptQuoted } from '../../common/log-text.js';
import { isJsonObject, isList, toPlain, type JsonObject, type JsonValue } from '../../json/index.js';
import { StoreError } from '../store-error.js';

/** The most problems one refusal lists: a hostile body cannot make the answer grow without bound. */
const MAX_LISTED = 20;

/** The problems found in a flow configuration, each at its path (`tasks[2].phase`). */
export class FlowProblems {
  readonly found: Array<{ key: string; message: string }> = [];
  private count = 0;

  add(path: string, message: string): void {
    this.count++;
    if (this.found.length < MAX_LISTED) this.found.push({ key: path, message });
  }

  get size(): number {
    return this.count;
  }

  /** Refuses the configuration (400, nothing stored), naming every problem's path. */
  throwIfAny(componentId: string): void {
    if (this.count === 0) return;
    const listed = this.found.map(({ key, message }) => (key ? `${key}: ${message}` : message)).join('; ');
    const more = this.count > this.found.length ? `; and ${this.count - this.found.length} more` : '';
    throw new FlowDefinitionError(
      `Invalid ${componentId} configuration: ${listed}${more}. Nothing was stored.`,
      this.found,
    );
  }
}

/** A flow configuration refused on write (or by `gex flows validate`): `details` holds each path and problem. */
export class FlowDefinitionError extends StoreError {
  constructor(message: string, problems: Array<{ key: string; message: string }>) {
    super(KEBOOLA_ERRORS.componentsValidation.status, KEBOOLA_ERRORS.componentsValidation.code, message, problems);
    this.name = 'FlowDefinitionError';
  }
}

/** An id someone wrote, quoted and cut for a message. */
export function quoteId(id: string): string {
  return excerptQuoted(id);
}

/** What a value someone wrote is, for a message: a string quoted and cut, otherwise its kind. */
export function describeFlowValue(value: JsonValue | undefined): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return value === '' ? 'an empty string' : excerptQuoted(value);
  if (typeof value === 'boolean') return String(value);
  if (isList(value)) return 'a list';
  if (isJsonObject(value)) return 'an object';
  return `the number ${excerptQuoted(String(toPlain(value)), 30).slice(1, -1)}`;
}

/** An id as Keboola compares it: a non-empty string, or an integer written as a string. */
export function flowId(value: JsonValue | undefined, path: string, problems: FlowProblems): string | undefined {
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))) return String(value);
  problems.add(path, `an id is a non-empty string or an integer, got ${describeFlowValue(value)}`);
  return undefined;
}

/** A name Keboola requires: a non-empty string. */
export function requiredName(item: JsonObject, path: string, problems: FlowProblems): string {
  const name = item.get('name');
  if (typeof name === 'string' && name.trim() !== '') return name;
  problems.add(`${path}.name`, `a name is required (a non-empty string), got ${describeFlowValue(name)}`);
  return '';
}
