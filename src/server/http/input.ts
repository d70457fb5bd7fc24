import {
  decodeJson,
  isJsonObject,
  isScalar,
  JsonSyntaxError,
  type JsonObject,
  type JsonValue,
} from '../../json/index.js';
import { phpToString } from '../../php/index.js';
import { StoreError } from '../../store/store-error.js';
import type {
  CopyConfigurationInput,
  CreateConfigurationInput,
  CreateRowInput,
  UpdateConfigurationInput,
  UpdateRowInput,
} from '../../store/types.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * Request bodies → store inputs, with the leniency real clients need (docs/storage-api.md#request-bodies):
 * `null` means "not provided" (the PHP client sends every create field, unset ones as null),
 * `configuration`/`state` may be JSON values or JSON-encoded strings (form bodies always are),
 * booleans may be strings, ids may be numbers. Wrong types are refused with the field's name.
 */

const VALIDATION = KEBOOLA_ERRORS.componentsValidation.code;

function invalid(field: string, problem: string, code: string = VALIDATION): StoreError {
  return StoreError.validation(`Invalid parameters - ${field}: ${problem}`, code);
}

/** The body as an object; no body (or PHP's empty array) is an empty one. */
function bodyObject(body: unknown): JsonObject {
  if (body === undefined || body === null) return new Map();
  if (isJsonObject(body)) return body;
  if (Array.isArray(body) && body.length === 0) return new Map();
  throw StoreError.validation(
    'The request body must be a JSON object (or a form) of named fields, e.g. {"name":"My configuration"}.',
  );
}

function present(body: JsonObject, field: string): JsonValue | undefined {
  const value = body.get(field);
  return value === null ? undefined : value;
}

/** A text field; numbers and booleans are written as PHP would. `label` names it in errors. */
function textField(body: JsonObject, field: string, label = field): string | undefined {
  const value = present(body, field);
  if (value === undefined) return undefined;
  if (!isScalar(value)) throw invalid(label, 'This value should be of type string.');
  return phpToString(value);
}

/** An id chosen by the client; empty means "generate one". */
function idField(body: JsonObject, field: string): string | undefined {
  const id = textField(body, field);
  return id === '' ? undefined : id;
}

/**
 * `changeDescription`; empty counts as not given, so the server's default text applies (the
 * Python client always sends `""`, the PHP client only sends non-empty ones).
 */
function changeDescriptionField(body: JsonObject): string | undefined {
  const text = textField(body, 'changeDescription');
  return text === '' ? undefined : text;
}

const TRUE_VALUES = new Set<JsonValue>([true, 1, '1', 'true']);
const FALSE_VALUES = new Set<JsonValue>([false, 0, '0', 'false']);

/** `isDisabled`: true/false, "true"/"false", 1/0, "1"/"0" (JSON or form). */
function flagField(body: JsonObject, field: string): boolean | undefined {
  const value = present(body, field);
  if (value === undefined) return undefined;
  const normalised = typeof value === 'string' ? value.toLowerCase() : value;
  if (TRUE_VALUES.has(normalised)) return true;
  if (FALSE_VALUES.has(normalised)) return false;
  throw invalid(field, 'This value should be of type bool (true, false, 1 or 0).');
}

/**
 * `configuration` / `state`: a JSON object or list, or a JSON-encoded string of one. An empty
 * string or JSON `null` counts as not given.
 */
function jsonBodyField(body: JsonObject, field: 'configuration' | 'state'): JsonValue | undefined {
  const code =
    field === 'configuration' ? KEBOOLA_ERRORS.invalidConfigurationFormat.code : KEBOOLA_ERRORS.invalidStateFormat.code;
  let value = present(body, field);
  if (typeof value === 'string') {
    if (value.trim() === '') return undefined;
    value = decodeField(value, field, code);
  }
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value) && !Array.isArray(value)) {
    throw invalid(field, 'This value should be a JSON object, e.g. {"parameters":{}}.', code);
  }
  return value;
}

function decodeField(text: string, field: string, code: string): JsonValue {
  try {
    return decodeJson(text);
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    throw invalid(field, `This value should be valid JSON (${e.message}).`, code);
  }
}

/** A list field: a JSON array, or a form's `field[0]=…` (sparse indexes arrive as an object). */
function listField(body: JsonObject, field: string): JsonValue[] | undefined {
  const value = present(body, field);
  if (value === undefined || value === '') return undefined;
  if (Array.isArray(value)) return value;
  if (isJsonObject(value) && [...value.keys()].every((k) => /^\d+$/.test(k))) {
    return [...value.entries()].sort((a, b) => Number(a[0]) - Number(b[0])).map(([, v]) => v);
  }
  throw invalid(field, 'This value should be an array.');
}

function rowsSortOrderField(body: JsonObject): string[] | undefined {
  const list = listField(body, 'rowsSortOrder');
  return list?.map((id, i) => {
    if (!isScalar(id)) throw invalid(`rowsSortOrder[${i}]`, 'This value should be a row id (a string).');
    return phpToString(id);
  });
}

export function createConfigurationInput(raw: unknown): CreateConfigurationInput {
  const body = bodyObject(raw);
  const name = textField(body, 'name');
  if (name === undefined) throw invalid('name', 'This field is missing.');
  // checked in the order of the fields, as before: the first invalid one is reported
  const configurationId = idField(body, 'configurationId');
  return { ...versionedFields(body), name, configurationId };
}

export function updateConfigurationInput(raw: unknown): UpdateConfigurationInput {
  const body = bodyObject(raw);
  return { ...versionedFields(body), rowsSortOrder: rowsSortOrderField(body) };
}

export function createRowInput(raw: unknown): CreateRowInput {
  const body = bodyObject(raw);
  return { rowId: idField(body, 'rowId'), ...updateRowInput(body) };
}

export function updateRowInput(raw: unknown): UpdateRowInput {
  return versionedFields(bodyObject(raw));
}

/** The fields configurations and rows share, on create and on update. */
function versionedFields(body: JsonObject): UpdateRowInput {
  return {
    name: textField(body, 'name'),
    description: textField(body, 'description'),
    configuration: jsonBodyField(body, 'configuration'),
    state: jsonBodyField(body, 'state'),
    changeDescription: changeDescriptionField(body),
    isDisabled: flagField(body, 'isDisabled'),
  };
}

/** Messages and codes of the two `/state` endpoints differ (docs/storage-api.md#errors). */
const STATE_ENDPOINT_RULES = {
  configuration: {
    unexpectedCode: VALIDATION,
    formatCode: VALIDATION,
    problem: (text: string) => `Invalid parameters - state: ${text}`,
  },
  row: {
    unexpectedCode: KEBOOLA_ERRORS.componentsRowsValidation.code,
    formatCode: KEBOOLA_ERRORS.invalidStateFormat.code,
    problem: (text: string) => `Invalid state body format: ${text}`,
  },
} as const;

/** The body of `PUT …/state`: exactly one field, `state`. */
export function stateInput(raw: unknown, target: 'configuration' | 'row'): JsonValue {
  const rules = STATE_ENDPOINT_RULES[target];
  const body = bodyObject(raw);
  for (const key of body.keys()) {
    if (key !== 'state')
      throw StoreError.validation(`Invalid parameters - ${key}: This field was not expected.`, rules.unexpectedCode);
  }
  const fail = (text: string) => StoreError.validation(rules.problem(text), rules.formatCode);
  if (!body.has('state')) throw fail('This field is missing.');
  let state = body.get('state');
  if (state === null || state === '') throw fail('This value should not be blank.');
  if (typeof state === 'string') {
    try {
      state = decodeJson(state);
    } catch {
      throw fail('This value should be valid JSON.');
    }
  }
  if (!isJsonObject(state) && !Array.isArray(state))
    throw fail('This value should be valid JSON (an object such as {} or {"key":"value"}).');
  return state;
}

export function changeDescriptionInput(raw: unknown): string | undefined {
  return changeDescriptionField(bodyObject(raw));
}

export function copyConfigurationInput(raw: unknown): CopyConfigurationInput {
  const body = bodyObject(raw);
  const name = textField(body, 'name');
  if (name === undefined) throw invalid('name', 'This field is missing.');
  return { name, description: textField(body, 'description'), changeDescription: changeDescriptionField(body) };
}

export function copyRowInput(raw: unknown): { targetConfigId?: string; changeDescription?: string } {
  const body = bodyObject(raw);
  return { targetConfigId: idField(body, 'targetConfigId'), changeDescription: changeDescriptionField(body) };
}

/** `{"metadata":[{"key","value"}…]}` or the form `metadata[0][key]=…&metadata[0][value]=…`. */
export function metadataInput(raw: unknown): Array<{ key: string; value: string }> {
  const body = bodyObject(raw);
  const list = listField(body, 'metadata');
  if (list === undefined) throw invalid('metadata', 'This field is missing.');
  return list.map((item, i) => {
    if (!isJsonObject(item)) throw invalid(`metadata[${i}]`, 'This value should be an object with "key" and "value".');
    const key = textField(item, 'key', `metadata[${i}][key]`);
    if (key === undefined || key === '') throw invalid(`metadata[${i}][key]`, 'This value should not be blank.');
    return { key, value: textField(item, 'value', `metadata[${i}][value]`) ?? '' };
  });
}
