import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { displayId } from '../../common/log-text.js';
import { createLogger } from '../../common/logger.js';
import { sentence } from '../../common/text.js';
import { SecretMasker } from '../../common/secret-masker.js';
import { checkInput } from '../../extractor/check/check-input.js';
import { closestKey } from '../../extractor/config/closest-key.js';
import { findUnknownKeys, unknownKeyWarning } from '../../extractor/config/unknown-keys.js';
import { parameterProblems } from '../../extractor/config/validate.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { mergeRowConfiguration, splitConfiguration } from '../../runner/effective-configuration.js';
import { componentImageParameters, decryptedInput } from '../../runner/unit-input.js';
import type { OpenedStore } from '../../store/open-config-store.js';
import type { Row } from '../../store/types.js';

/**
 * What `gex configs create|edit` and `gex rows add|edit` check before they store a body — the
 * checks `gex check` makes, so that a typo is not found only at the next run:
 * - the part written (a root or a row): unknown keys, with the nearest known key (warnings, as GE
 *   ignores them);
 * - every configuration a run would give the extractor after the change (each row merged over its
 *   root, or the root when it has no rows): what a run would refuse — wrong types, values out of
 *   range, `limit=abc`, bad output names or headers — is an error, unless it was already so before
 *   this change; keys it lacks are a warning (another part may still bring them: rows carry jobs).
 * The Storage API server checks nothing of the kind: Keboola's API stores any JSON.
 */

/** One configuration a run would give the extractor, after the change and (for a change) before it. */
export interface CheckedUnit {
  label: string;
  after: JsonValue;
  before?: JsonValue;
}

export interface WrittenPart {
  /** `configuration shop`, `row users` */
  label: string;
  body: JsonValue;
}

export interface WriteCheckContext {
  opened: OpenedStore;
  componentId: string;
}

/** The keys of a configuration body that Keboola's runner reads; others are ignored. */
const BODY_KEYS = ['parameters', 'storage', 'processors', 'authorization', 'runtime'];

export interface WriteProblems {
  /** what a run would refuse, per configuration */
  errors: string[];
  warnings: string[];
}

export const forceOption = <T>(y: Argv<T>) =>
  y.option('force', {
    type: 'boolean',
    default: false,
    describe:
      'store the body even when a run would refuse it (checked as "gex check" does: wrong types, values out of range, …)',
  }) as Argv<T & { force: boolean }>;

/** The label of a row's configuration, as warnings and errors name it. */
export function rowLabel(row: Pick<Row, 'id' | 'isDisabled'>): string {
  return `row ${displayId(row.id)}${row.isDisabled ? ' (disabled)' : ''}`;
}

/** The configurations a run would run after a root changes: each row over the new root, or the root alone. */
export function rootUnits(label: string, rows: Row[], after: JsonValue, before?: JsonValue): CheckedUnit[] {
  if (rows.length === 0) return [{ label, after, before }];
  return rows.map((row) => ({
    label: rowLabel(row),
    after: mergeRowConfiguration(after, row.configuration),
    before: before === undefined ? undefined : mergeRowConfiguration(before, row.configuration),
  }));
}

/** The configuration a run would run after a row changes: the row over its root. */
export function rowUnit(label: string, root: JsonValue, after: JsonValue, before?: JsonValue): CheckedUnit {
  return {
    label,
    after: mergeRowConfiguration(root, after),
    before: before === undefined ? undefined : mergeRowConfiguration(root, before),
  };
}

/** Unknown keys of a body: its own (`paramaters`) and those of its parameters. */
function unknownKeys(body: JsonValue): string[] {
  const own = isJsonObject(body)
    ? [...body.keys()]
        .filter((key) => !BODY_KEYS.includes(key))
        .map((key) => unknownKeyWarning({ path: displayId(key), suggestion: closestKey(key, BODY_KEYS) }))
    : [];
  return [...own, ...findUnknownKeys(splitConfiguration(body).parameters).map(unknownKeyWarning)];
}

interface UnitOutcome {
  error?: string;
  warning?: string;
}

/** What a run would say of one configuration before its first request (nothing is sent). */
async function unitOutcome(body: JsonValue, context: WriteCheckContext, masker: SecretMasker): Promise<UnitOutcome> {
  if (!isJsonObject(body) && !(Array.isArray(body) && body.length === 0))
    return { error: 'the configuration body is not a JSON object' };
  const stored = splitConfiguration(body);
  masker.addFromConfig(stored.parameters);
  masker.addFromConfig(stored.authorization);
  const { invalid, missing } = await parameterProblems(stored.parameters);
  if (invalid) return { error: masker.mask(invalid.message) };
  if (missing.length > 0)
    return { warning: `a run fails until ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} set` };
  let input;
  try {
    input = await decryptedInput(
      context.opened,
      context.componentId,
      stored,
      new Map(),
      await componentImageParameters(context.opened, context.componentId),
      masker,
    );
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    return {
      warning: `its secrets cannot be decrypted here, so only the schema was checked (${masker.mask(error.message)})`,
    };
  }
  const checked = await checkInput(input, '', null, { logger: createLogger({ level: 'silent' }), masker });
  return checked.error ? { error: checked.error.message } : {};
}

/** Checks a change before it is stored; nothing is sent and nothing is written. */
export async function checkWrite(
  part: WrittenPart,
  units: CheckedUnit[],
  context: WriteCheckContext,
): Promise<WriteProblems> {
  const masker = new SecretMasker();
  const problems: WriteProblems = { errors: [], warnings: unknownKeys(part.body).map((w) => `${part.label}: ${w}`) };
  // one line per message, naming every configuration it is about (a root edit reaches every row)
  const grouped = new Map<string, string[]>();
  const note = (message: string, label: string) => grouped.set(message, [...(grouped.get(message) ?? []), label]);
  for (const unit of units) {
    const after = await unitOutcome(unit.after, context, masker);
    if (after.warning) note(after.warning, unit.label);
    if (!after.error) continue;
    // a problem this change did not bring is not the change's to fix: it is said, not refused
    const before = unit.before === undefined ? undefined : await unitOutcome(unit.before, context, masker);
    if (before?.error === after.error) note(`${after.error} (so before this change too)`, unit.label);
    else problems.errors.push(`${unit.label}: ${after.error}`);
  }
  for (const [message, labels] of grouped) {
    const shown =
      labels.length > 5 ? `${labels.slice(0, 5).join(', ')} and ${labels.length - 5} more` : labels.join(', ');
    problems.warnings.push(`${shown}: ${message}`);
  }
  problems.warnings = problems.warnings.map((w) => masker.mask(w));
  return problems;
}

/**
 * Prints the warnings, and refuses the change when a run would refuse what it stores — unless
 * `force`, when the errors are printed as warnings and the change goes on.
 */
export function enforceWriteCheck(
  problems: WriteProblems,
  force: boolean,
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): void {
  for (const warning of problems.warnings) write(`Warning: ${warning}`);
  if (problems.errors.length === 0) return;
  if (force) {
    for (const error of problems.errors) write(`Warning: stored anyway (--force): ${error}`);
    return;
  }
  const shown = problems.errors.slice(0, 3).join('; ');
  const more = problems.errors.length > 3 ? ` (and ${problems.errors.length - 3} more)` : '';
  throw new UserError(
    'GEX_CONFIG_REFUSED',
    `Not stored: a run would refuse it. ${sentence(`${shown}${more}`)} Fix it, or store it anyway with --force ("gex check" shows every problem).`,
  );
}
