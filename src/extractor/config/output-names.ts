import { ConfigError } from '../../common/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import { asPhpArray, phpEmpty, phpLooseEqualsWord, phpToString } from '../../php/index.js';
import { legacySafeName, safeName } from '../../php/safe-names.js';
import { arrayKey } from '../output/mapping/config-values.js';
import { bucketNameProblem, quoteName, tableFileProblem } from '../output/table-files.js';
import { parseJobList, type JobConfig } from './job-config.js';

/**
 * The output names a configuration sets — `outputBucket` (or `ex-api-<api.name>-<config.id>`),
 * the keys and `table` destinations of `mappings`, and the table names jobs derive from `dataType`
 * or `endpoint` — checked before any request is sent, so a name that cannot be a file in
 * out/tables is a configuration error naming its key rather than a failure after the download.
 */

/** The output bucket of a config (iteration) as GE names it; null = the default bucket. */
export function outputBucket(config: JsonObject, apiName: string): string | null {
  const bucket = config.get('outputBucket');
  if (!phpEmpty(bucket)) return phpToString(bucket);
  const id = config.get('id');
  return phpEmpty(id) ? null : `ex-api-${apiName}-${phpToString(id)}`;
}

/** Checks every output name of every config (one per iteration) against the file name rules. */
export function checkOutputNames(parameters: JsonObject, configs: JsonObject[], apiName: string): void {
  configs.forEach((config, index) => {
    const where = (key: string) => configKeyPath(parameters, index, key);
    const bucket = checkBucket(config, apiName, where);
    const mappings = phpEmpty(config.get('mappings')) ? null : asPhpArray(config.get('mappings'));
    if (mappings) checkMappings(mappings, bucket, where('mappings'));
    const jobs = parseJobList(config.get('jobs'), where('jobs'));
    checkJobs(jobs, bucket, mappings);
  });
}

/**
 * Where a key of an iteration's config comes from: the iteration's own value replaces `config`'s
 * (shallow merge), so that is the key to fix.
 */
function configKeyPath(parameters: JsonObject, index: number, key: string): string {
  const iterations = parameters.get('iterations');
  const iteration = Array.isArray(iterations) ? iterations[index] : undefined;
  if (isJsonObject(iteration) && iteration.has(key)) return `parameters.iterations[${index}].${key}`;
  return `parameters.config.${key}`;
}

/** `.key`, or `["key"]` for keys that do not read as a plain name. */
function keySegment(key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? `.${key}` : `[${quoteName(key)}]`;
}

function checkBucket(config: JsonObject, apiName: string, where: (key: string) => string): string | null {
  const bucket = outputBucket(config, apiName);
  if (bucket === null) return null;
  const problem = bucketNameProblem(bucket);
  if (!problem) return bucket;
  const fix =
    'Tables are files named <bucket>.<table> in out/tables: use a bucket name without "/", "\\" or NUL, at most 255 bytes';
  if (!phpEmpty(config.get('outputBucket')))
    throw new ConfigError(where('outputBucket'), `the bucket name ${quoteName(bucket)} ${problem}`, fix);
  // the default bucket `ex-api-<api.name>-<config.id>`: blame the part that brings a bad character
  throw new ConfigError(
    /[/\\\u0000]/.test(apiName) ? 'parameters.api.name' : where('id'),
    `makes the bucket name ${quoteName(bucket)}, which ${problem}`,
    `${fix}, or set config.outputBucket`,
  );
}

/** Mapping keys and (at any depth) `table` destinations are table names written as they are. */
function checkMappings(mappings: JsonObject, bucket: string | null, path: string): void {
  for (const [type, mapping] of mappings) {
    const mappingPath = `${path}${keySegment(type)}`;
    checkTableName(bucket, type, mappingPath);
    checkTableEntries(mapping, bucket, mappingPath);
  }
}

function checkTableEntries(mapping: JsonValue | undefined, bucket: string | null, path: string): void {
  for (const [column, item] of asPhpArray(mapping) ?? new Map<string, JsonValue>()) {
    const entry = asPhpArray(item);
    if (!entry || !phpLooseEqualsWord(entry.get('type'), 'table')) continue;
    const entryPath = `${path}${keySegment(column)}`;
    const destination = entry.get('destination');
    if (!phpEmpty(destination)) checkTableName(bucket, arrayKey(destination), `${entryPath}.destination`);
    checkTableEntries(entry.get('tableMapping'), bucket, `${entryPath}.tableMapping`);
  }
}

/**
 * A job's table is its mapping key when `mappings` has one for its data type, else the name the
 * parser derives from the data type. Which parser a bucket gets can depend on the data of earlier
 * iterations, so both the new and the legacy parser's names must be writable.
 */
function checkJobs(jobs: JobConfig[], bucket: string | null, mappings: JsonObject | null): void {
  for (const job of jobs) {
    if (!mappings?.has(job.dataType)) {
      const key = phpEmpty(job.definition.get('dataType')) ? 'endpoint' : 'dataType';
      for (const name of new Set([safeName(job.dataType), legacySafeName(job.dataType)])) {
        checkTableName(
          bucket,
          name,
          `${job.path}.${key}`,
          `${quoteName(job.dataType)} becomes the table name ${quoteName(name)} (only letters, digits and "-" are kept):`,
        );
      }
    }
    checkJobs(job.children, bucket, mappings);
  }
}

function checkTableName(bucket: string | null, table: string, path: string, lead?: string): void {
  const problem = tableFileProblem(bucket, table);
  if (problem) {
    throw new ConfigError(
      path,
      lead ? `${lead} ${problem}` : problem,
      'Every table is a file in out/tables: use a name that is not empty, ".", or "..", has no "/", "\\" or NUL, and keeps <bucket>.<table>.manifest within 255 bytes',
    );
  }
}
