import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../json/index.js';
import { phpArrayMerge, phpEmpty, phpJsonRoundTrip, toPhpArrayMap } from '../../php/index.js';
import type { ResolvedPlaceholder } from '../children/placeholders.js';
import type { JobConfig } from '../config/job-config.js';
import {
  evaluateParams,
  userScriptError,
  type FunctionContexts,
  type UserFunctions,
} from '../functions/user-functions.js';
import type { PageRequest } from '../pagination/paginator.js';

/** One run of a job definition: a top-level job, or a child job for one parent record and placeholder combination. */
export interface JobInstance {
  job: JobConfig;
  /** endpoint with placeholders filled */
  endpoint: string;
  /** extra columns of its rows: userData, parent_* */
  injected: JsonObject;
  /** records that led here: [parent's, grandparent's, …] */
  ancestors: JsonValue[];
  /** placeholder values children inherit */
  resolved: ResolvedPlaceholder[];
}

/** What evaluating a job's user functions needs. */
export interface FunctionScope {
  functions: UserFunctions;
  /** `attr` (the configuration without jobs) and `time` (previousStart, currentStart) */
  contexts: FunctionContexts;
}

/** The columns a top-level job adds to its records: GE's array_merge(config userData, job userData) when the config has any (integer keys renumbered). */
export function topLevelUserData(job: JobConfig, configUserData: JsonObject, scope: FunctionScope): JsonObject {
  const own = evaluateUserData(job.userData, 'job_parent_id', scope);
  return configUserData.size > 0 ? phpArrayMerge(configUserData, own) : own;
}

/** The request a job asks for before pagination varies it: its endpoint, evaluated params and method. */
export function jobTemplate(job: JobConfig, endpoint: string, scope: FunctionScope): PageRequest {
  return {
    endpoint,
    params: evaluateParams(job.params, scope.functions, scope.contexts),
    method: job.method,
    // with `multiple` pagination a child picks its own scroller (or the default)
    scroller: job.scroller,
  };
}

/**
 * `userData` (config or job): an object gives its entries, a list its items under the keys 0, 1, …
 * (a PHP array either way), a non-empty scalar becomes `{<scalarKey>: value}`; values may be user
 * functions (context attr, time) and must end up scalar.
 * GE builds it with UserFunction::build, so its numbers take PHP's JSON round trip (1e15 → int).
 */
export function evaluateUserData(value: JsonValue | undefined, scalarKey: string, scope: FunctionScope): JsonObject {
  if (value === undefined || phpEmpty(value)) return new Map();
  const entries: JsonObject =
    isJsonObject(value) || Array.isArray(value) ? toPhpArrayMap(value) : new Map([[scalarKey, value]]);
  const out: JsonObject = new Map();
  for (const [k, v] of entries) {
    const evaluated = isJsonObject(v) ? scope.functions.evaluate(v, scope.contexts) : phpJsonRoundTrip(v);
    if (evaluated !== null && !isScalar(evaluated))
      throw userScriptError(`userData '${k}' must be a scalar value, not an object or list`);
    out.set(k, evaluated);
  }
  return out;
}
