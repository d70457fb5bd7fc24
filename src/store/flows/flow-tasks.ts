import { isJsonObject, isList, type JsonObject, type JsonValue } from '../../json/index.js';
import { FLOW_LIMITS, type FlowTask, type NotificationTaskAction, type TaskRetry } from './flow-model.js';
import { describeFlowValue, flowId, requiredName, type FlowProblems } from './flow-problems.js';

/** Keboola's `retry`: linear only; `maxRetries` (default 3) runs after the first, `delay` seconds apart. */
export function readRetry(value: JsonValue | undefined, path: string, problems: FlowProblems): TaskRetry | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value)) {
    problems.add(path, `an object {strategy, strategyParams, retryOn}, got ${describeFlowValue(value)}`);
    return undefined;
  }
  const strategy = value.get('strategy');
  if (strategy !== undefined && strategy !== 'linear') {
    problems.add(`${path}.strategy`, `only "linear" is known, got ${describeFlowValue(strategy)}`);
  }
  const params = value.get('strategyParams');
  const paramObject = isJsonObject(params) ? params : new Map<string, JsonValue>();
  if (params !== undefined && !isJsonObject(params)) {
    problems.add(`${path}.strategyParams`, `an object {maxRetries, delay}, got ${describeFlowValue(params)}`);
  }
  const maxRetries = boundedInteger(
    paramObject.get('maxRetries'),
    3,
    FLOW_LIMITS.maxRetries,
    `${path}.strategyParams.maxRetries`,
    problems,
  );
  const delaySeconds = boundedInteger(
    paramObject.get('delay'),
    10,
    FLOW_LIMITS.delaySeconds,
    `${path}.strategyParams.delay`,
    problems,
  );
  const retryOn: TaskRetry['retryOn'] = [];
  const on = value.get('retryOn');
  if (on !== undefined && on !== null && !isList(on))
    problems.add(`${path}.retryOn`, `a list, got ${describeFlowValue(on)}`);
  (isList(on) ? on : []).forEach((rule, index) => {
    const at = `${path}.retryOn[${index}]`;
    const type = isJsonObject(rule) ? rule.get('type') : undefined;
    const text = isJsonObject(rule) ? rule.get('value') : undefined;
    if ((type !== 'errorMessageContains' && type !== 'errorMessageExact') || typeof text !== 'string') {
      problems.add(at, 'a rule {type: "errorMessageContains" | "errorMessageExact", value: "text"}');
    } else retryOn.push({ type, value: text });
  });
  return { maxRetries, delaySeconds, retryOn };
}

/** A whole number from 0 to max (a string of digits too, as Keboola's `delay` may be). */
export function boundedInteger(
  value: JsonValue | undefined,
  fallback: number,
  max: number,
  path: string,
  problems: FlowProblems,
): number {
  if (value === undefined || value === null) return fallback;
  const number = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  if (typeof number === 'number' && Number.isInteger(number) && number >= 0 && number <= max) return number;
  problems.add(path, `a whole number from 0 to ${max}, got ${describeFlowValue(value)}`);
  return fallback;
}

export function readTask(
  item: JsonValue,
  path: string,
  conditional: boolean,
  problems: FlowProblems,
): FlowTask | undefined {
  if (!isJsonObject(item)) {
    problems.add(path, `a task is an object with "id", "name", "phase" and "task", got ${describeFlowValue(item)}`);
    return undefined;
  }
  const id = flowId(item.get('id'), `${path}.id`, problems);
  const name = requiredName(item, path, problems);
  const phase = flowId(item.get('phase'), `${path}.phase`, problems);
  const enabled = optionalBoolean(item.get('enabled'), true, `${path}.enabled`, problems);
  const continueOnFailure = optionalBoolean(
    item.get('continueOnFailure'),
    false,
    `${path}.continueOnFailure`,
    problems,
  );
  const action = readAction(item.get('task'), `${path}.task`, conditional, enabled, problems);
  if (id === undefined || phase === undefined || action === undefined) return undefined;
  return { id, name, phase, enabled, continueOnFailure, action };
}

function optionalBoolean(
  value: JsonValue | undefined,
  fallback: boolean,
  path: string,
  problems: FlowProblems,
): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  problems.add(path, `true or false, got ${describeFlowValue(value)}`);
  return fallback;
}

function readAction(
  value: JsonValue | undefined,
  path: string,
  conditional: boolean,
  enabled: boolean,
  problems: FlowProblems,
): FlowTask['action'] | undefined {
  if (!isJsonObject(value)) {
    problems.add(path, `required: an object {componentId, configId, mode}, got ${describeFlowValue(value)}`);
    return undefined;
  }
  const type = conditional ? (value.get('type') ?? 'job') : 'job';
  if (type === 'notification') return readNotification(value, path, problems);
  if (type === 'variable') {
    problems.add(
      `${path}.type`,
      'variable tasks are not supported by gex; set the value in the configurations the flow runs',
    );
    return undefined;
  }
  if (type !== 'job') {
    problems.add(`${path}.type`, `"job" or "notification", got ${describeFlowValue(type)}`);
    return undefined;
  }
  if (value.has('configData')) {
    problems.add(
      `${path}.configData`,
      'an inline configuration is not supported: store it and name it with "configId"',
    );
  }
  const componentId = value.get('componentId');
  const configId = value.get('configId');
  const ids: string[] = [];
  if (typeof componentId !== 'string' || componentId === '') {
    if (enabled || componentId !== undefined)
      problems.add(`${path}.componentId`, `required: a component id, got ${describeFlowValue(componentId)}`);
  } else ids.push(componentId);
  const config = configId === undefined && !enabled ? undefined : flowId(configId, `${path}.configId`, problems);
  const mode = value.get('mode') ?? 'run';
  if (mode !== 'run' && mode !== 'debug') problems.add(`${path}.mode`, `"run", got ${describeFlowValue(mode)}`);
  const rows = value.get('configRowIds');
  const configRowIds = rows === undefined || rows === null ? [] : rowIds(rows, `${path}.configRowIds`, problems);
  const delaySeconds = boundedInteger(value.get('delay'), 0, FLOW_LIMITS.delaySeconds, `${path}.delay`, problems);
  const retry = conditional ? readRetry(value.get('retry'), `${path}.retry`, problems) : undefined;
  return {
    type: 'job',
    componentId: typeof componentId === 'string' ? componentId : '',
    configId: config ?? '',
    mode: typeof mode === 'string' ? mode : 'run',
    configRowIds,
    delaySeconds,
    retry,
  };
}

function rowIds(value: JsonValue, path: string, problems: FlowProblems): string[] {
  if (!isList(value)) {
    problems.add(path, `a list of row ids, got ${describeFlowValue(value)}`);
    return [];
  }
  return value.flatMap((one, index) => {
    const id = flowId(one, `${path}[${index}]`, problems);
    return id === undefined ? [] : [id];
  });
}

/** A notification task: Keboola's `channel: {type, recipients}` (or a list of `{channel, address}`). */
function readNotification(value: JsonObject, path: string, problems: FlowProblems): NotificationTaskAction | undefined {
  const title = value.get('title');
  if (typeof title !== 'string' || title === '')
    problems.add(`${path}.title`, `required: a title, got ${describeFlowValue(title)}`);
  const message = value.get('message');
  const channelValue = value.get('channel');
  let channel: string | undefined;
  let recipients: JsonValue[] = [];
  if (isJsonObject(channelValue)) {
    const t = channelValue.get('type');
    channel = typeof t === 'string' ? t : undefined;
    const list = channelValue.get('recipients');
    recipients = isList(list) ? list : [];
  } else if (isList(value.get('recipients'))) {
    const list = value.get('recipients') as JsonValue[];
    const first = list.find(isJsonObject);
    const t = first?.get('channel');
    channel = typeof t === 'string' ? t : undefined;
    recipients = list.map((one) => (isJsonObject(one) ? (one.get('address') ?? one.get('url') ?? null) : one));
  }
  if (channel !== 'email' && channel !== 'webhook') {
    problems.add(`${path}.channel.type`, `"email" or "webhook", got ${describeFlowValue(channel ?? null)}`);
    return undefined;
  }
  const addresses = recipients.filter((one): one is string => typeof one === 'string' && one !== '');
  if (addresses.length === 0 || addresses.length !== recipients.length) {
    problems.add(
      `${path}.channel.recipients`,
      `at least one ${channel === 'email' ? 'address' : 'URL'}, each a non-empty string`,
    );
  }
  if (channel === 'webhook') {
    addresses.forEach((url, index) => {
      if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) {
        problems.add(`${path}.channel.recipients[${index}]`, 'a webhook is an http:// or https:// URL');
      }
    });
  }
  return {
    type: 'notification',
    channel,
    recipients: addresses,
    title: typeof title === 'string' ? title : '',
    message: typeof message === 'string' ? message : '',
  };
}
