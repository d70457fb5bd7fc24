import { excerptId } from '../../common/log-text.js';
import { isJsonObject, isList, type JsonValue } from '../../json/index.js';
import { StoreError } from '../../store/store-error.js';
import { cronTicks, CronProblem } from './cron-tick.js';
import { SCHEDULER_COMPONENT_ID } from './scheduler-component.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/** What a schedule configuration says: when, and which configuration it runs. */
export interface ScheduleDefinition {
  cronTab: string;
  timezone: string;
  state: 'enabled' | 'disabled';
  target: {
    componentId: string;
    configurationId: string;
    configurationRowIds: string[];
    mode: 'run';
  };
}

const MAX_ROW_IDS = 100;
const MAX_ID = 256;

function invalid(key: string, message: string): StoreError {
  return new StoreError(400, KEBOOLA_ERRORS.schedulerValidation.code, `Invalid schedule: ${key}: ${message}`, [
    { key, message },
  ]);
}

function text(node: Map<string, JsonValue>, key: string, field: string, fallback?: string): string {
  const value = node.get(key) ?? fallback;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value !== 'string' || value === '' || value.length > MAX_ID)
    throw invalid(field, `required: a string of at most ${MAX_ID} characters`);
  return value;
}

export interface ScheduleDefinitionOptions {
  /**
   * Accept a cron whose days never come (`0 0 31 4,6,9,11 *`): for reading a schedule an older gex
   * stored, never for one being written or activated (default: refused).
   */
  neverFiring?: 'refuse' | 'accept';
}

/**
 * The schedule a `keboola.scheduler` configuration holds, checked field by field: a cron syntax
 * error, a cron that can never fire, an unknown time zone or a malformed target is refused with
 * the field's path. Whether the target exists is the caller's check (it needs the project's store).
 */
export function scheduleDefinition(
  configuration: JsonValue | undefined,
  options: ScheduleDefinitionOptions = {},
): ScheduleDefinition {
  if (!isJsonObject(configuration)) throw invalid('configuration', 'expected an object with schedule and target');
  const schedule = configuration.get('schedule');
  if (!isJsonObject(schedule)) throw invalid('schedule', 'required: {"cronTab": "0 * * * *", "timezone": "UTC"}');
  const cronTab = text(schedule, 'cronTab', 'schedule.cronTab');
  const timezone = text(schedule, 'timezone', 'schedule.timezone', 'UTC');
  let never: string | undefined;
  try {
    never = cronTicks(cronTab, timezone).never;
  } catch (error) {
    if (!(error instanceof CronProblem)) throw error;
    const field = error.message.startsWith('unknown time zone') ? 'schedule.timezone' : 'schedule.cronTab';
    throw invalid(field, `${excerptId(field === 'schedule.timezone' ? timezone : cronTab)}: ${error.message}`);
  }
  if (never && options.neverFiring !== 'accept')
    throw invalid('schedule.cronTab', `${excerptId(cronTab)}: ${never}; fix the day fields`);
  const state = schedule.get('state') ?? 'enabled';
  if (state !== 'enabled' && state !== 'disabled') throw invalid('schedule.state', 'expected "enabled" or "disabled"');

  const target = configuration.get('target');
  if (!isJsonObject(target)) throw invalid('target', 'required: {"componentId": "…", "configurationId": "…"}');
  const componentId = text(target, 'componentId', 'target.componentId');
  if (componentId === SCHEDULER_COMPONENT_ID) throw invalid('target.componentId', 'a schedule cannot run a schedule');
  const configurationId = text(target, 'configurationId', 'target.configurationId');
  const rows = target.get('configurationRowIds');
  let configurationRowIds: string[] = [];
  if (rows !== undefined && rows !== null) {
    if (
      !isList(rows) ||
      rows.length > MAX_ROW_IDS ||
      rows.some((r) => (typeof r !== 'string' && typeof r !== 'number') || String(r).length > MAX_ID)
    )
      throw invalid('target.configurationRowIds', `expected a list of at most ${MAX_ROW_IDS} row ids`);
    configurationRowIds = rows.map(String);
  }
  const mode = target.get('mode') ?? 'run';
  if (mode !== 'run') throw invalid('target.mode', 'gex schedules run jobs in mode "run"');
  return { cronTab, timezone, state, target: { componentId, configurationId, configurationRowIds, mode } };
}

/** The definition as a configuration body (what `gex schedules add` stores). */
export function scheduleConfiguration(definition: ScheduleDefinition): Record<string, unknown> {
  return {
    schedule: { cronTab: definition.cronTab, timezone: definition.timezone, state: definition.state },
    target: { ...definition.target },
  };
}
