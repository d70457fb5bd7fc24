import type { ErrorObject } from 'ajv';
import { ConfigError } from '../../common/errors.js';
import { toPlain, type JsonValue } from '../../json/index.js';
import { findNonFiniteFloat } from '../../php/index.js';
import { AJV_OPTIONS, GENERATED_VALIDATOR } from './validator-options.js';
import { parametersSchema } from './schema.js';

interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

let validator: Promise<Validator> | undefined;

/**
 * The schema's validator: precompiled at build time (ajv standalone code; importing ajv and
 * compiling the schema would cost ~150 ms of every run's start-up), compiled here if the
 * generated module is missing (e.g. after a bare `tsc`).
 */
function loadValidator(): Promise<Validator> {
  validator ??= import(new URL(GENERATED_VALIDATOR, import.meta.url).href)
    .then((module: { default: Validator }) => module.default)
    .catch(async () => {
      const { Ajv } = await import('ajv');
      return new Ajv(AJV_OPTIONS).compile(parametersSchema) as Validator;
    });
  return validator;
}

/**
 * Checks `parameters` against the schema and throws a ConfigError that names the JSON path, what
 * is wrong and what is expected — for the most specific problem found.
 */
export async function validateParameters(parameters: JsonValue, root = 'parameters'): Promise<void> {
  refuseNonFinite(parameters, root);
  const validate = await loadValidator();
  if (validate(toPlain(parameters))) return;
  throw describe(validate.errors ?? [], root);
}

/**
 * What is wrong with a configuration that other parts may still complete (a root whose rows will
 * carry the jobs, a row over a root that has no API yet): `missing` are the sections it lacks —
 * `api`, `api.baseUrl`, `config`, `config.jobs` — and `invalid` the most specific problem with
 * what it has (wrong types, values out of range, a job without its endpoint), which no other part
 * can fix. `gex configs`/`gex rows` check what they store with it.
 */
export interface ParameterProblems {
  invalid?: ConfigError;
  missing: string[];
}

/** Where a missing key is a section not written yet (instance paths of the objects holding them). */
const SECTIONS = new Set(['', '/api', '/config']);

export async function parameterProblems(parameters: JsonValue, root = 'parameters'): Promise<ParameterProblems> {
  try {
    refuseNonFinite(parameters, root);
  } catch (error) {
    return { invalid: error as ConfigError, missing: [] };
  }
  const validate = await loadValidator();
  if (validate(toPlain(parameters))) return { missing: [] };
  const errors = validate.errors ?? [];
  // a whole section not written yet: required at the top, of api or of config
  const absent = (e: ErrorObject) => e.keyword === 'required' && SECTIONS.has(e.instancePath);
  const rest = errors.filter((e) => !absent(e));
  return {
    invalid: rest.length > 0 ? describe(rest, root) : undefined,
    missing: [...new Set(errors.filter(absent).map((e) => pathOf(e, root)))],
  };
}

/**
 * A number beyond the float range (1e400) is INF in PHP. GE passes params, headers and userData
 * through json_encode, which fails on it — and GE then silently sends the request with none of
 * them. Refused wherever it is: no configuration means it.
 */
function refuseNonFinite(parameters: JsonValue, root: string): void {
  const keys = findNonFiniteFloat(parameters);
  if (keys === null) return;
  const path = root + keys.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('');
  throw new ConfigError(
    path,
    'is a number beyond the float range (INF in PHP)',
    'Write a number within ±1.8e308, or a string if the API expects these digits as text',
  );
}

function describe(errors: ErrorObject[], root: string): ConfigError {
  const located = errors.map((e) => ({ error: e, path: pathOf(e, root) }));
  const depth = (p: string) => p.split(/[.[]/).length;
  const deepest = Math.max(...located.map((l) => depth(l.path)));
  const atDeepest = located.filter((l) => depth(l.path) === deepest);
  const chosen = atDeepest.find((l) => l.error.keyword !== 'anyOf') ?? atDeepest[0];
  const { error, path } = chosen;
  const hint = atDeepest.map((l) => expected(l.error)).find((d) => d !== undefined);
  if (error.keyword === 'required') {
    return new ConfigError(path, 'is missing', hint ? `Set it to ${hint}` : undefined);
  }
  const got = render(error.data);
  const problem = hint ? `got ${got}` : `${error.message ?? 'is invalid'} (got ${got})`;
  return new ConfigError(path, problem, hint ? `Expected ${hint}` : undefined);
}

function pathOf(error: ErrorObject, root: string): string {
  let path = root;
  for (const segment of error.instancePath.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(key) ? `[${key}]` : `.${key}`;
  }
  if (error.keyword === 'required') path += `.${(error.params as { missingProperty: string }).missingProperty}`;
  return path;
}

function expected(error: ErrorObject): string | undefined {
  const schema = error.parentSchema as
    { description?: string; properties?: Record<string, { description?: string }> } | undefined;
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return schema?.properties?.[missing]?.description;
  }
  return schema?.description;
}

function render(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
