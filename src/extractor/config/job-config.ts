import { ConfigError } from '../../common/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import { md5Hex, phpEmpty, phpSerializeArray, phpToString } from '../../php/index.js';

export type JobMethod = 'GET' | 'POST' | 'FORM';

export interface DataFieldSpec {
  path: string;
  delimiter: string;
}

/** One job (top-level or child) of `parameters.config.jobs`, normalised. */
export interface JobConfig {
  /** `id`, or md5 of the PHP-serialised definition: identical jobs collapse into one (GE). */
  id: string;
  /** where the job sits in the configuration, for messages */
  path: string;
  endpoint: string;
  params: JsonObject;
  method: JobMethod;
  /** output table name: `dataType`, or the raw endpoint */
  dataType: string;
  dataField: DataFieldSpec | null;
  responseFilter: string[];
  responseFilterDelimiter: string;
  /** request headers of this job (merged over `defaultOptions.headers`) */
  headers: JsonObject;
  /** name of the scroller for `multiple` pagination */
  scroller: string | null;
  userData: JsonValue | undefined;
  placeholders: JsonObject;
  recursionFilter: string | null;
  /**
   * gex's addition: how many runs of this child job (one per parent record) may be fetched ahead
   * at once; null = its parent's (a top-level job's: `api.pagination.concurrency`)
   */
  concurrency: number | null;
  children: JobConfig[];
  definition: JsonObject;
}

function asObject(value: JsonValue | undefined, path: string, what: string): JsonObject {
  if (phpEmpty(value)) return new Map();
  if (Array.isArray(value)) return new Map(value.map((v, i) => [String(i), v]));
  if (!isJsonObject(value))
    throw new ConfigError(path, `${what} must be an object, got ${JSON.stringify(phpToString(value))}`);
  return value;
}

function asString(value: JsonValue | undefined, fallback: string): string {
  return value === undefined || value === null ? fallback : phpToString(value);
}

function parseMethod(value: JsonValue | undefined, path: string): JobMethod {
  if (phpEmpty(value)) return 'GET';
  const method = phpToString(value).toUpperCase();
  if (method === 'GET' || method === 'POST' || method === 'FORM') return method;
  throw new ConfigError(`${path}.method`, `unknown method ${JSON.stringify(value)}`, 'Use GET, POST or FORM');
}

function parseDataField(value: JsonValue | undefined, path: string): DataFieldSpec | null {
  if (phpEmpty(value)) return null;
  if (isJsonObject(value)) {
    const fieldPath = value.get('path');
    if (phpEmpty(fieldPath)) {
      throw new ConfigError(
        `${path}.dataField.path`,
        'is missing or empty',
        'Set it to the path of the records, e.g. "data.items"',
      );
    }
    const delimiter = value.get('delimiter');
    return { path: phpToString(fieldPath), delimiter: phpEmpty(delimiter) ? '.' : phpToString(delimiter) };
  }
  return { path: phpToString(value), delimiter: '.' };
}

function parseResponseFilter(value: JsonValue | undefined): string[] {
  if (phpEmpty(value)) return [];
  return Array.isArray(value) ? value.map((v) => phpToString(v)) : [phpToString(value)];
}

function jobConcurrency(value: JsonValue | undefined): number | null {
  // the schema has refused anything but a whole number from 1 to 64
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : null;
}

/**
 * The effective child concurrency of every job of a configuration: a job's own `concurrency`,
 * else its parent's, else (top-level) `api.pagination.concurrency`.
 */
export function childConcurrencies(jobs: JobConfig[], apiConcurrency: number): Map<JobConfig, number> {
  const out = new Map<JobConfig, number>();
  const visit = (job: JobConfig, inherited: number) => {
    const own = job.concurrency ?? inherited;
    out.set(job, own);
    for (const child of job.children) visit(child, own);
  };
  for (const job of jobs) visit(job, apiConcurrency);
  return out;
}

export function parseJob(definition: JsonValue, path: string): JobConfig {
  if (!isJsonObject(definition))
    throw new ConfigError(path, 'must be an object', 'A job looks like {"endpoint": "users"}');
  const endpoint = definition.get('endpoint');
  if (typeof endpoint !== 'string' || endpoint === '') {
    throw new ConfigError(`${path}.endpoint`, 'is missing or empty', 'Set it to the resource path, e.g. "users"');
  }
  const id = definition.get('id');
  const dataType = definition.get('dataType');
  const recursionFilter = definition.get('recursionFilter');
  const scroller = definition.get('scroller');
  return {
    id: phpEmpty(id) ? md5Hex(phpSerializeArray(definition)) : phpToString(id),
    path,
    endpoint,
    params: asObject(definition.get('params'), `${path}.params`, 'params'),
    method: parseMethod(definition.get('method'), path),
    dataType: phpEmpty(dataType) ? endpoint : phpToString(dataType),
    dataField: parseDataField(definition.get('dataField'), path),
    responseFilter: parseResponseFilter(definition.get('responseFilter')),
    responseFilterDelimiter: asString(definition.get('responseFilterDelimiter'), '.') || '.',
    headers: asObject(definition.get('headers'), `${path}.headers`, 'headers'),
    scroller: phpEmpty(scroller) ? null : phpToString(scroller),
    userData: definition.get('userData'),
    placeholders: asObject(definition.get('placeholders'), `${path}.placeholders`, 'placeholders'),
    recursionFilter: phpEmpty(recursionFilter) ? null : phpToString(recursionFilter),
    concurrency: jobConcurrency(definition.get('concurrency')),
    children: parseJobList(definition.get('children'), `${path}.children`),
    definition,
  };
}

/**
 * Jobs are kept in a map keyed by id, like GE: a later job with the same id replaces the earlier
 * definition but keeps its position, so byte-identical jobs run once.
 */
export function parseJobList(value: JsonValue | undefined, path: string): JobConfig[] {
  if (phpEmpty(value)) return [];
  if (!Array.isArray(value)) throw new ConfigError(path, 'must be a list of jobs', 'Use [{"endpoint": "..."}]');
  const byId = new Map<string, JobConfig>();
  value.forEach((definition, i) => {
    const job = parseJob(definition, `${path}[${i}]`);
    byId.set(job.id, job);
  });
  return [...byId.values()];
}
