import { excerptId } from '../common/log-text.js';
import { isJsonObject, isList, type JsonValue } from '../json/index.js';
import { MAX_ADDRESSABLE_ID_LENGTH } from '../store/addressable-id.js';
import type { ConfigStore } from '../store/config-store.js';
import { StoreError } from '../store/store-error.js';
import type { TokenInfo } from '../store/types.js';
import type { NewJob } from './job-record.js';
import { KEBOOLA_ERRORS } from '../common/keboola-errors.js';
import { parseFlowDefinition } from '../store/flows/flow-definition.js';
import { FLOW_LIMITS, isFlowComponent } from '../store/flows/flow-model.js';

/** gex's one branch (the default one), as the Storage API numbers it */
export const DEFAULT_BRANCH = '1';
/** row ids one job may name */
const MAX_ROW_IDS = 100;
/** a run id (`X-KBC-RunId`, `parentRunId`): Keboola's are numbers joined by dots */
const RUN_ID = /^[0-9A-Za-z_-]{1,64}(?:\.[0-9A-Za-z_-]{1,64}){0,15}$/;

function invalid(key: string, message: string, status = 400): StoreError {
  return new StoreError(status, KEBOOLA_ERRORS.queueValidation.code, `Invalid job: ${key}: ${message}`, [
    { key, message },
  ]);
}

/** Null, absent, `[]`, `{}` or '' — what clients send for "not set". */
function isUnset(value: JsonValue | undefined): boolean {
  return (
    value === undefined ||
    value === null ||
    value === '' ||
    (isList(value) && value.length === 0) ||
    (isJsonObject(value) && value.size === 0)
  );
}

function optionalText(body: Map<string, JsonValue>, key: string, max = 256): string | null {
  const value = body.get(key);
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value !== 'string' || value.length > max)
    throw invalid(key, `expected a string of at most ${max} characters`);
  return value;
}

/** Keys gex does not support: refused when set, never silently ignored. */
const UNSUPPORTED = [
  'configData',
  'parallelism',
  'variableValuesId',
  'variableValuesData',
  'orchestrationTaskId',
  'previousJobId',
];

/** The most task ids a subset run may name (a flow holds at most FLOW_LIMITS.tasks). */
const MAX_TASK_IDS = FLOW_LIMITS.tasks;

/** What a job is asked to run: a stored configuration of the token's project, as typed values. */
export interface JobTarget {
  componentId: string;
  configId: string;
  /** the rows to run (none: every enabled row) */
  configRowIds: readonly string[];
  mode: 'run' | 'forceRun';
  /** the run the job belongs to (`X-KBC-RunId`): its run id becomes `<parent>.<id>`; none: '' or absent */
  parentRunId?: string;
  tag?: string | null;
  orchestrationJobId?: string | null;
  /** a flow's subset run (`onlyOrchestrationTaskIds` / `onlyFlowTaskIds`): only these tasks */
  onlyTaskIds?: readonly string[] | null;
}

/**
 * A create request's body (`POST /jobs`) parsed into a target: every key of the right type,
 * nothing unsupported asked for; `headerRunId` (`X-KBC-RunId`) wins over `parentRunId`. A problem
 * is a 400 naming the key.
 */
export function jobTargetFromBody(body: JsonValue | undefined, headerRunId: string | undefined): JobTarget {
  if (!isJsonObject(body))
    throw invalid('body', 'expected a JSON object such as {"component": "ex-generic-v2", "config": "123"}');
  for (const key of UNSUPPORTED) {
    if (!isUnset(body.get(key))) throw invalid(key, `gex does not support ${key}: run a stored configuration instead`);
  }
  const component = body.get('component') ?? body.get('componentId');
  if (typeof component !== 'string') throw invalid('component', 'required: the id of the component');
  const config = optionalText(body, 'config') ?? optionalText(body, 'configId') ?? '';
  const mode = body.get('mode') ?? 'run';
  if (mode !== 'run' && mode !== 'forceRun') throw invalid('mode', 'gex runs jobs in mode "run" or "forceRun"');
  const branch = optionalText(body, 'branchId');
  if (branch !== null && branch !== DEFAULT_BRANCH && branch !== 'default') {
    throw invalid('branchId', `gex has no development branches: send null or ${DEFAULT_BRANCH} (the default branch)`);
  }
  const rowsValue = body.get('configRowIds');
  let rowIds: string[] = [];
  if (!isUnset(rowsValue)) {
    if (!isList(rowsValue) || rowsValue.some((r) => typeof r !== 'string' && typeof r !== 'number')) {
      throw invalid('configRowIds', `expected a list of at most ${MAX_ROW_IDS} row ids`);
    }
    rowIds = rowsValue.map(String);
  }
  const legacySubset = body.get('onlyOrchestrationTaskIds');
  const flowSubset = body.get('onlyFlowTaskIds');
  if (!isUnset(legacySubset) && !isUnset(flowSubset)) {
    throw invalid('onlyFlowTaskIds', 'send onlyOrchestrationTaskIds or onlyFlowTaskIds, not both');
  }
  const subsetKey = isUnset(flowSubset) ? 'onlyOrchestrationTaskIds' : 'onlyFlowTaskIds';
  const subset = isUnset(flowSubset) ? legacySubset : flowSubset;
  let onlyTaskIds: string[] | null = null;
  if (!isUnset(subset)) {
    const ids = isList(subset)
      ? subset.map((id) => (typeof id === 'number' || typeof id === 'string' ? String(id) : ''))
      : [];
    if (
      !isList(subset) ||
      ids.length > MAX_TASK_IDS ||
      ids.some((id) => id === '' || id.length > MAX_ADDRESSABLE_ID_LENGTH)
    ) {
      throw invalid(subsetKey, `expected a non-empty list of at most ${MAX_TASK_IDS} task ids`);
    }
    if (new Set(ids).size !== ids.length) throw invalid(subsetKey, 'each task id at most once');
    onlyTaskIds = ids;
  }
  return {
    onlyTaskIds,
    componentId: component,
    configId: config,
    configRowIds: rowIds,
    mode,
    parentRunId: headerRunId?.trim() || optionalText(body, 'parentRunId') || '',
    tag: optionalText(body, 'tag'),
    orchestrationJobId: optionalText(body, 'orchestrationJobId'),
  };
}

/**
 * The wire's door: a create request (`POST /jobs`) from a token that may create jobs, parsed
 * (jobTargetFromBody) and made a new job (newJob).
 */
export async function newJobFromRequest(
  body: JsonValue | undefined,
  headerRunId: string | undefined,
  token: TokenInfo,
  store: ConfigStore,
): Promise<NewJob> {
  requireJobCreator(token);
  return newJob(jobTargetFromBody(body, headerRunId), token, store);
}

function requireJobCreator(token: TokenInfo): void {
  if (token.readOnly) throw StoreError.accessDenied('A read-only token cannot create jobs.');
}

/**
 * A target checked against the token's project and made a new job (the Queue API, `gex jobs run`,
 * a schedule's tick and its activation): the component and configuration exist, every named row
 * exists. Any problem is a 4xx naming the body's key; nothing is stored.
 */
export async function newJob(target: JobTarget, token: TokenInfo, store: ConfigStore): Promise<NewJob> {
  requireJobCreator(token);
  const { componentId: component, configId: config, mode } = target;
  if (component === '') throw invalid('component', 'required: the id of the component');
  // no component has a longer id: one can never be found, and is not quoted back whole
  if (component.length > MAX_ADDRESSABLE_ID_LENGTH)
    throw invalid(
      'component',
      `component ${excerptId(component)} is not registered (ids are at most ${MAX_ADDRESSABLE_ID_LENGTH} characters)`,
      404,
    );
  if (config === '') throw invalid('config', 'required: the id of a stored configuration');
  if (target.configRowIds.length > MAX_ROW_IDS)
    throw invalid('configRowIds', `expected a list of at most ${MAX_ROW_IDS} row ids`);
  const rowIds = [...target.configRowIds];
  const parentRunId = target.parentRunId ?? '';
  if (parentRunId !== '' && !RUN_ID.test(parentRunId))
    throw invalid('parentRunId', 'expected a run id such as 123 or 123.456 (X-KBC-RunId)');

  // the component, then the configuration of this project; another project's is not found
  try {
    await store.getComponent(component);
  } catch (error) {
    if (error instanceof StoreError && error.status === 404)
      throw invalid('component', `component ${excerptId(component)} is not registered`, 404);
    throw error;
  }
  let configuration;
  try {
    configuration = await store.getConfiguration(component, config);
  } catch (error) {
    if (error instanceof StoreError && error.status === 404)
      throw invalid('config', `configuration ${excerptId(config)} of ${excerptId(component)} not found`, 404);
    throw error;
  }
  if (isFlowComponent(component)) return flowJob(target, token, configuration.configuration, parentRunId);
  if (target.onlyTaskIds)
    throw invalid('onlyOrchestrationTaskIds', `${excerptId(component)} is not a flow: it has no tasks`);
  if (rowIds.length > 0) {
    const known = new Set(configuration.rows.map((r) => r.id));
    const missing = rowIds.find((id) => !known.has(id));
    if (missing !== undefined)
      throw invalid('configRowIds', `configuration ${excerptId(config)} has no row ${excerptId(missing)}`);
  }
  return {
    projectId: token.projectId,
    componentId: component,
    configId: config,
    branchId: DEFAULT_BRANCH,
    mode: mode,
    parentRunId,
    tokenId: token.id,
    tokenDescription: token.description,
    configRowIds: rowIds,
    tag: target.tag ?? null,
    orchestrationJobId: target.orchestrationJobId ?? null,
    timeoutSeconds: processTimeout(configuration.configuration),
  };
}

/** A flow's root job: its definition as stored now (checked again), the subset's tasks named by it. */
function flowJob(target: JobTarget, token: TokenInfo, definition: JsonValue, parentRunId: string): NewJob {
  const component = target.componentId;
  if (!isFlowComponent(component)) throw new Error(`${component} is not a flow component`);
  let tasks: Set<string>;
  try {
    tasks = new Set(parseFlowDefinition(component, definition, { configId: target.configId }).tasks.map((t) => t.id));
  } catch (error) {
    if (error instanceof StoreError) throw invalid('config', `the flow cannot run: ${error.message}`);
    throw error;
  }
  const missing = target.onlyTaskIds?.find((id) => !tasks.has(id));
  if (missing !== undefined) throw invalid('onlyOrchestrationTaskIds', `the flow has no task ${excerptId(missing)}`);
  return {
    projectId: token.projectId,
    componentId: component,
    configId: target.configId,
    branchId: DEFAULT_BRANCH,
    mode: target.mode,
    parentRunId,
    tokenId: token.id,
    tokenDescription: token.description,
    configRowIds: [],
    tag: target.tag ?? null,
    orchestrationJobId: null,
    timeoutSeconds: null,
    flow: { definition, onlyTaskIds: target.onlyTaskIds ? [...target.onlyTaskIds] : null },
  };
}

/** the longest limit a configuration may set: a 30-day job is not a job */
const MAX_PROCESS_TIMEOUT = 30 * 24 * 3600;

/**
 * The configuration's own job time limit, Keboola's `runtime.process_timeout` (seconds), when it
 * is a whole number ≥ 1; anything else is no limit of its own (the worker's `--job-timeout` holds).
 */
export function processTimeout(configuration: JsonValue | undefined): number | null {
  const runtime = isJsonObject(configuration) ? configuration.get('runtime') : undefined;
  const value = isJsonObject(runtime) ? runtime.get('process_timeout') : undefined;
  const seconds = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  return typeof seconds === 'number' && Number.isSafeInteger(seconds) && seconds >= 1
    ? Math.min(seconds, MAX_PROCESS_TIMEOUT)
    : null;
}
