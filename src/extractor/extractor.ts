import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { ConfigError, UserError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { plural } from '../common/text.js';
import {
  arrayReplaceRecursive,
  isJsonObject,
  phpEmpty,
  phpIntCast,
  phpJsonEncode,
  phpToString,
  type JsonObject,
  type JsonValue,
} from '../php-compat/index.js';
import { checkAllowedHosts } from './config/allowed-hosts.js';
import { buildApiSettings } from './config/api-settings.js';
import type { DataDirInput } from './config/data-dir.js';
import { parseJobList, type JobConfig } from './config/job-config.js';
import { validateParameters } from './config/validate.js';
import { HttpClient } from './http/http-client.js';
import { RetryPolicy } from './http/retry-policy.js';
import { runJob } from './job-runner.js';
import { STRUCT_VERSION } from './output/json-parser/json-parser.js';
import { OutputWriter, type WrittenTable } from './output/output-writer.js';
import { createPaginator } from './pagination/factory.js';
import { RunProgress } from './run-progress.js';
import type { ProgressLine } from '../common/progress-line.js';

export interface ExtractOptions {
  dataDir: string;
  logger: Logger;
  progressLine?: ProgressLine;
  /** unix seconds of the run start (tests pin it) */
  now?: () => number;
  tmpDir?: string;
}

export interface JobSummary {
  job: string;
  pages: number;
  records: number;
  stopReason: string;
}

export interface ExtractionResult {
  tables: WrittenTable[];
  jobs: JobSummary[];
  /** `out/state.json` content, exactly as written */
  stateText: string;
  requests: number;
  retries: number;
  durationMs: number;
}

const PARAM_CONTEXTS = ['attr', 'time'];

/**
 * GE evaluates object values as user functions: `{"function": …}`, or a one-key object naming a
 * context (`{"attr": "x"}`); any other object is plain data evaluated member by member.
 */
function usesUserFunction(value: JsonObject, contexts: string[]): boolean {
  if (value.has('function')) return true;
  if (value.size === 1 && contexts.includes([...value.keys()][0])) return true;
  return [...value.values()].some((v) => isJsonObject(v) && usesUserFunction(v, contexts));
}

/** Features of Generic Extractor this build does not implement yet: refused, never ignored. */
function refuseUnsupported(parameters: JsonObject, config: JsonObject, jobs: JobConfig[]): void {
  const refuse = (where: string, what: string) => {
    throw new ConfigError(where, `${what} is not supported by this version of gex`, 'Remove it or run the configuration with Generic Extractor');
  };
  if (!phpEmpty(parameters.get('iterations'))) refuse('parameters.iterations', 'iterations');
  const api = parameters.get('api') as JsonObject;
  if (!phpEmpty(api.get('authentication'))) refuse('parameters.api.authentication', 'authentication');
  if (!phpEmpty(config.get('mappings'))) refuse('parameters.config.mappings', 'mappings');
  if (!phpEmpty(config.get('userData'))) refuse('parameters.config.userData', 'userData');
  const pagination = api.get('pagination');
  if (isJsonObject(pagination)) {
    for (const key of ['nextPageFlag', 'forceStop', 'limitStop']) {
      if (!phpEmpty(pagination.get(key))) refuse(`parameters.api.pagination.${key}`, key);
    }
  }
  const visit = (list: JobConfig[]) => {
    for (const job of list) {
      if (job.children.length > 0) refuse(`${job.path}.children`, 'child jobs');
      if (job.userData !== undefined && !phpEmpty(job.userData)) refuse(`${job.path}.userData`, 'userData');
      for (const [key, value] of job.params) {
        if (isJsonObject(value) && usesUserFunction(value, PARAM_CONTEXTS)) refuse(`${job.path}.params.${key}`, 'user functions in params');
      }
    }
  };
  visit(jobs);
  for (const [where, node] of [['parameters.api.http', api.get('http')], ['parameters.config.http', config.get('http')]] as const) {
    const headers = isJsonObject(node) ? node.get('headers') : undefined;
    if (!isJsonObject(headers)) continue;
    for (const [name, value] of headers) if (isJsonObject(value)) refuse(`${where}.headers.${name}`, 'user functions in headers');
  }
}

function outputBucket(config: JsonObject, apiName: string): string | null {
  const bucket = config.get('outputBucket');
  if (!phpEmpty(bucket)) return phpToString(bucket);
  const id = config.get('id');
  return phpEmpty(id) ? null : `ex-api-${apiName}-${phpToString(id)}`;
}

function compatLevel(config: JsonObject): number {
  const level = config.get('compatLevel');
  return phpEmpty(level) ? 3 : phpIntCast(level);
}

/** The state GE writes: input state, `time.previousStart` = this run's start, parser structure. */
export function buildOutState(input: JsonObject, startSeconds: number, struct: JsonValue | undefined): string {
  const state: JsonObject = new Map(input);
  const time = state.get('time');
  const newTime: JsonObject = isJsonObject(time) ? new Map(time) : new Map();
  newTime.set('previousStart', startSeconds);
  newTime.delete('currentStart');
  state.set('time', newTime);
  if (struct !== undefined) {
    const previous = state.get('json_parser.struct');
    state.set('json_parser.struct', previous === undefined ? struct : arrayReplaceRecursive(previous, struct));
    state.set('json_parser.structVersion', STRUCT_VERSION);
  }
  return phpJsonEncode(state, { objectsAreArrays: true });
}

/** Runs a Generic Extractor configuration on a data folder (Keboola common interface). */
export async function extract(input: DataDirInput, options: ExtractOptions): Promise<ExtractionResult> {
  const { logger } = options;
  if (input.action !== 'run') {
    throw new UserError(`Action '${input.action}' is not supported: gex runs extractions only (action "run").`);
  }
  const parameters = input.parameters;
  validateParameters(parameters);
  const apiNode = parameters.get('api') as JsonObject;
  const config = parameters.get('config') as JsonObject;
  const jobs = parseJobList(config.get('jobs'), 'parameters.config.jobs');
  refuseUnsupported(parameters, config, jobs);
  const level = compatLevel(config);
  const structVersion = input.state.get('json_parser.structVersion');
  if (level <= 1 || structVersion === 2) {
    throw new ConfigError(
      level <= 1 ? 'parameters.config.compatLevel' : 'in/state.json json_parser.structVersion',
      'the legacy JSON parser (compatLevel 1 / structure version 2) is not supported by this version of gex',
      'Remove compatLevel, or reset the state with {}',
    );
  }

  const startSeconds = (options.now ?? (() => Math.floor(Date.now() / 1000)))();
  const outTables = path.join(options.dataDir, 'out', 'tables');
  await mkdir(outTables, { recursive: true });
  const output = new OutputWriter(outTables, logger, input.state.get('json_parser.struct'), options.tmpDir);
  const progress = new RunProgress(options.progressLine);
  const summaries: JobSummary[] = [];
  let requests = 0;
  let retries = 0;
  try {
    const api = buildApiSettings(apiNode, config);
    checkAllowedHosts(input.imageParameters, api.baseUrl, jobs);
    const client = new HttpClient({
      retry: new RetryPolicy(api.retry),
      connectTimeoutMs: api.connectTimeoutMs,
      requestTimeoutMs: api.requestTimeoutMs,
      logger,
    });
    try {
      const incremental = config.get('incrementalOutput') === true;
      const parser = await output.parserFor(outputBucket(config, api.name), incremental);
      for (const job of jobs) {
        const result = await runJob(job, createPaginator(api.pagination), { api, client, parser, logger, progress, compatLevel: level });
        summaries.push({ job: job.dataType, ...result });
      }
      output.captureStruct(parser);
    } finally {
      client.close();
      requests += client.stats.requests;
      retries += client.stats.retries;
    }
    const tables = await output.finish();
    progress.done();
    for (const t of tables) logger.info(`Wrote table ${t.file}: ${plural(t.rows, 'row')}`);
    return {
      tables,
      jobs: summaries,
      stateText: buildOutState(input.state, startSeconds, output.structState()),
      requests,
      retries,
      durationMs: progress.elapsedMs,
    };
  } catch (error) {
    progress.done();
    await output.dispose();
    throw error;
  }
}
