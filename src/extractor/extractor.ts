import { mkdir } from 'node:fs/promises';
import { ConfigError, UserError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { displayText } from '../common/log-text.js';
import { groupThousands, plural } from '../common/text.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import { phpEmpty, phpIntCast } from '../php/index.js';
import { allowedHostsRule, checkAllowedHosts } from './config/allowed-hosts.js';
import { apiName, buildApiSettings } from './config/api-settings.js';
import { DataFolder, type DataFolderInput } from './data-folder.js';
import { ExtractorState } from './extractor-state.js';
import { parseJobList } from './config/job-config.js';
import { checkOutputNames, outputBucket } from './config/output-names.js';
import { validateParameters } from './config/validate.js';
import { warnUnknownKeys } from './config/unknown-keys.js';
import { HttpClient } from './http/http-client.js';
import { maxResponseBytesFromEnv } from './http/response-size.js';
import { RetryPolicy } from './http/retry-policy.js';
import { evaluateUserData, JobRunner } from './job-runner.js';
import { flattenContext, UserFunctions, type FunctionContexts } from './functions/user-functions.js';
import { OutputWriter, type WrittenTable } from './output/output-writer.js';
import { createPaginator } from './pagination/factory.js';
import { RunProgress } from './run-progress.js';
import type { ProgressLine } from '../common/progress-line.js';
import { SecretMasker } from '../common/secret-masker.js';
import { AwsSigner, awsCredentials, createAuth, maskingLogger, SYSTEM_RUNTIME, type AuthRuntime } from './auth/index.js';

export interface ExtractOptions {
  dataDir: string;
  logger: Logger;
  progressLine?: ProgressLine;
  /** unix seconds of the run start (tests pin it) */
  now?: () => number;
  tmpDir?: string;
  /** the run's log masker: secrets the auth obtains at run time (login and OAuth tokens) are added to it */
  masker?: SecretMasker;
  /** clock and nonces of the auth methods (tests pin them) */
  authRuntime?: Partial<AuthRuntime>;
  /** the largest response body after decompression (default: $GEX_MAX_RESPONSE_SIZE, else 256 MiB) */
  maxResponseBytes?: number;
  /** stops the run (a stop signal): requests in flight are aborted, nothing is written, temporary files are removed */
  signal?: AbortSignal;
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
  /** the state to keep for the next run (ExtractorState.output: as its state file holds it) */
  state: JsonObject;
  requests: number;
  retries: number;
  durationMs: number;
}

/** Infrastructure options of GE that gex does not offer: refused, never silently ignored. */
function refuseUnsupported(parameters: JsonObject): void {
  const refuse = (where: string, what: string, fix: string) => {
    throw new ConfigError(where, `${what} is not supported by gex`, fix);
  };
  if (!phpEmpty(parameters.get('sshProxy'))) refuse('parameters.sshProxy', 'an SSH tunnel', 'Reach the API directly (e.g. run gex inside the network) or use Generic Extractor');
}

/**
 * The configurations of a run: `config` itself, or one per item of `parameters.iterations`, each
 * the config with the iteration's keys replacing its own (a shallow merge, like GE).
 */
export function iterationConfigs(parameters: JsonObject): JsonObject[] {
  const config = parameters.get('config') as JsonObject;
  const iterations = parameters.get('iterations');
  if (!Array.isArray(iterations) || iterations.length === 0) return [config];
  return iterations.map((iteration, i) => {
    if (!isJsonObject(iteration)) throw new ConfigError(`parameters.iterations[${i}]`, 'must be an object', 'An iteration looks like {"accountId": 123}');
    const merged = new Map(config);
    for (const [k, v] of iteration) merged.set(k, v);
    return merged;
  });
}

function compatLevel(config: JsonObject): number {
  const level = config.get('compatLevel');
  return phpEmpty(level) ? 3 : phpIntCast(level);
}

/** Runs a Generic Extractor configuration on a data folder (Keboola common interface). */
export async function extract(input: DataFolderInput, options: ExtractOptions): Promise<ExtractionResult> {
  // secrets the auth obtains at run time are hidden in every log line: by the run's masker, or
  // (when the caller gives none) by masking what this extraction logs
  const secrets = options.masker ?? new SecretMasker();
  for (const value of [input.parameters, input.authorization, input.state]) secrets.addFromConfig(value);
  const logger = options.masker ? options.logger : maskingLogger(options.logger, secrets);
  try {
    return await runExtraction(input, options, secrets, logger);
  } catch (error) {
    throw hideSecretsIn(error, secrets);
  }
}

/** The error with secrets hidden in its message and stack: whoever prints it cannot reveal them. */
function hideSecretsIn(error: unknown, secrets: SecretMasker): unknown {
  if (!(error instanceof Error)) return error;
  const { stack } = error;
  error.message = secrets.mask(error.message);
  if (stack !== undefined) error.stack = secrets.mask(stack);
  return error;
}

/** The checks GE makes before any request; returns what the run needs of the configuration. */
async function checkBeforeRequests(input: DataFolderInput, logger: Logger, signal: AbortSignal | undefined): Promise<{ apiNode: JsonObject; configs: JsonObject[] }> {
  if (input.action !== 'run') {
    throw new UserError(`Action '${input.action}' is not supported: gex runs extractions only (action "run").`);
  }
  signal?.throwIfAborted();
  const parameters = input.parameters;
  await validateParameters(parameters);
  // GE ignores keys it does not know and so does gex, but a typo must not pass unnoticed
  warnUnknownKeys(parameters, logger);
  const apiNode = parameters.get('api') as JsonObject;
  refuseUnsupported(parameters);
  const configs = iterationConfigs(parameters);
  checkOutputNames(parameters, configs, apiName(apiNode));
  return { apiNode, configs };
}

/** What every iteration of a run shares. */
interface RunContext {
  input: DataFolderInput;
  options: ExtractOptions;
  apiNode: JsonObject;
  secrets: SecretMasker;
  logger: Logger;
  signer: AwsSigner | undefined;
  allowedUrl: ReturnType<typeof allowedHostsRule>;
  maxResponseBytes: number;
  output: OutputWriter;
  progress: RunProgress;
  functions: UserFunctions;
  time: Map<string, JsonValue>;
}

/** Counts of a run, added to by each iteration. */
interface RunTotals {
  jobs: JobSummary[];
  requests: number;
  retries: number;
}

async function runExtraction(input: DataFolderInput, options: ExtractOptions, secrets: SecretMasker, logger: Logger): Promise<ExtractionResult> {
  const { apiNode, configs } = await checkBeforeRequests(input, logger, options.signal);
  // checked before any request, as GE's Executor does; one signer for every configuration
  const credentials = awsCredentials(input.parameters);
  const signer = credentials ? new AwsSigner(credentials, options.authRuntime?.now ?? SYSTEM_RUNTIME.now, secrets) : undefined;

  const state = new ExtractorState(input.state, (options.now ?? (() => Math.floor(Date.now() / 1000)))());
  const outTables = new DataFolder(options.dataDir).tablesDir;
  await mkdir(outTables, { recursive: true });
  const output = new OutputWriter(outTables, logger, state.inputStruct(), options.tmpDir);
  const run: RunContext = {
    input,
    options,
    apiNode,
    secrets,
    logger,
    signer,
    allowedUrl: allowedHostsRule(input.imageParameters),
    maxResponseBytes: options.maxResponseBytes ?? maxResponseBytesFromEnv(),
    output,
    progress: new RunProgress(options.progressLine),
    functions: new UserFunctions(),
    time: state.timeContext(),
  };
  const totals: RunTotals = { jobs: [], requests: 0, retries: 0 };
  try {
    for (const [index, config] of configs.entries()) {
      const iterationRun = configs.length > 1 ? { ...run, logger: logger.child({ iteration: index + 1 }) } : run;
      if (configs.length > 1) iterationRun.logger.info(`Iteration ${groupThousands(index + 1)} of ${groupThousands(configs.length)}`);
      await runIteration(config, iterationRun, totals);
    }
    const tables = await output.finish(options.signal);
    run.progress.done();
    for (const t of tables) logger.info({ table: t.file, rows: t.rows }, `Wrote table ${displayText(t.file)}: ${plural(t.rows, 'row')}`);
    return {
      tables,
      ...totals,
      // a secret echoed by the API into a state value (not under a `#` key) is not stored
      state: state.output(output.structState(), (value) => secrets.maskValues(value)),
      durationMs: run.progress.elapsedMs,
    };
  } catch (error) {
    run.progress.done();
    await output.dispose();
    throw error;
  }
}

/** One configuration (of `iterations`): its API settings, auth and client, then its jobs in order. */
async function runIteration(config: JsonObject, run: RunContext, totals: RunTotals): Promise<void> {
  const { apiNode, functions, logger, secrets, input, options } = run;
  const attributes = new Map(config);
  attributes.delete('jobs');
  const contexts: FunctionContexts = { attr: flattenContext(attributes), time: run.time };
  const api = buildApiSettings(apiNode, config, (v) => functions.evaluate(v, { attr: contexts.attr }));
  const auth = createAuth({
    api: apiNode,
    attributes,
    attr: contexts.attr,
    authorization: input.authorization,
    settings: api,
    functions,
    logger,
    secrets,
    runtime: options.authRuntime,
  });
  const jobs = parseJobList(config.get('jobs'), 'parameters.config.jobs');
  checkAllowedHosts(input.imageParameters, api.baseUrl, jobs);
  const client = new HttpClient({
    retry: new RetryPolicy(api.retry),
    connectTimeoutMs: api.connectTimeoutMs,
    requestTimeoutMs: api.requestTimeoutMs,
    logger,
    auth,
    signer: run.signer,
    tls: { caCertificate: api.caCertificate, clientCertificate: api.clientCertificate },
    concurrency: api.concurrency,
    allowedUrl: run.allowedUrl,
    maxResponseBytes: run.maxResponseBytes,
    signal: options.signal,
  });
  try {
    const parser = await run.output.parserFor(outputBucket(config, api.name), {
      incremental: config.get('incrementalOutput') === true,
      mappings: config.get('mappings'),
      compatLevel: compatLevel(config),
    });
    const runner = new JobRunner({ api, client, parser, logger, progress: run.progress, compatLevel: compatLevel(config), functions, contexts, redact: (text) => secrets.mask(text), signal: options.signal });
    const configUserData = evaluateUserData(config.get('userData'), 'userData', { functions, contexts });
    for (const job of jobs) {
      const result = await runner.runTopLevel(job, configUserData, createPaginator(api.pagination, 'parameters.api.pagination', job.scroller));
      totals.jobs.push({ job: job.dataType, ...result });
    }
    run.output.captureStruct(parser);
  } finally {
    client.close();
    totals.requests += client.stats.requests;
    totals.retries += client.stats.retries;
  }
}
