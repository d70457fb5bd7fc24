import type { Logger } from '../common/logger.js';
import { displayText } from '../common/log-text.js';
import { groupThousands, plural } from '../common/text.js';
import type { JsonObject, JsonValue } from '../json/index.js';
import { allowedHostsRule } from './config/allowed-hosts.js';
import { DataFolder, type DataFolderInput } from './data-folder.js';
import { ExtractorState } from './extractor-state.js';
import { outputBucket } from './config/output-names.js';
import { unknownKeyWarning } from './config/unknown-keys.js';
import { HttpClient } from './http/http-client.js';
import { ReachedHosts } from './http/reached-hosts.js';
import { maxResponseBytesFromEnv } from './http/response-size.js';
import { RetryPolicy } from './http/retry-policy.js';
import { evaluateUserData } from './jobs/job-instance.js';
import { JobRunner } from './jobs/job-runner.js';
import { childConcurrencies } from './config/job-config.js';
import { UserFunctions } from './functions/user-functions.js';
import { OutputWriter, type WrittenTable } from './output/output-writer.js';
import { createPaginator } from './pagination/factory.js';
import type { StopCode } from './pagination/paginator.js';
import { checkBeforeRequests, compatLevel, prepareIteration } from './pre-request-checks.js';
import { RunProgress } from './run-progress.js';
import type { ProgressLine } from '../common/progress-line.js';
import { SecretMasker } from '../common/secret-masker.js';
import { AwsSigner, awsCredentials, maskingLogger, SYSTEM_RUNTIME, type AuthRuntime } from './auth/index.js';

export interface ExtractOptions {
  dataDir: string;
  /**
   * The data folder `dataDir` is in (default: `dataDir` itself): no symbolic link below it is
   * followed by a write (a row's run passes the data folder its `rows/<row>` folder is in)
   */
  dataRoot?: string;
  logger: Logger;
  progressLine?: ProgressLine;
  /** unix seconds of the run start (tests pin it) */
  now?: () => number;
  tmpDir?: string;
  /**
   * the run's log masker, which already knows the input's secrets (registered once per run, by its
   * plan): secrets the auth obtains at run time (login and OAuth tokens) are added to it
   */
  masker?: SecretMasker;
  /** clock and nonces of the auth methods (tests pin them) */
  authRuntime?: Partial<AuthRuntime>;
  /** the largest response body after decompression (default: $GEX_MAX_RESPONSE_SIZE, else 256 MiB) */
  maxResponseBytes?: number;
  /** stops the run (a stop signal): requests in flight are aborted, nothing is written, temporary files are removed */
  signal?: AbortSignal;
  /**
   * the hosts that answered in this run (a run of several rows shares one): a host that has not
   * gets retries to connect for at most FIRST_CONTACT_MS; default: this extraction's own
   */
  reachedHosts?: ReachedHosts;
}

export interface JobSummary {
  job: string;
  pages: number;
  records: number;
  stopReason: string;
  /** a cap (`forceStop.pages`, …) or a natural end (`underflow`, …): see StopCode */
  stoppedBy: StopCode;
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

/** A masker of the input's secrets, for an extraction whose caller gives none (library use). */
function maskerOf(input: DataFolderInput): SecretMasker {
  const secrets = new SecretMasker();
  for (const value of [input.parameters, input.authorization, input.state]) secrets.addFromConfig(value);
  return secrets;
}

/** Runs a Generic Extractor configuration on a data folder (Keboola common interface). */
export async function extract(input: DataFolderInput, options: ExtractOptions): Promise<ExtractionResult> {
  // secrets the auth obtains at run time are hidden in every log line: by the run's masker (its
  // plan registered the input's secrets), or (when the caller gives none) by masking what this
  // extraction logs
  const secrets = options.masker ?? maskerOf(input);
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
  reachedHosts: ReachedHosts;
}

/** Counts of a run, added to by each iteration. */
interface RunTotals {
  jobs: JobSummary[];
  requests: number;
  retries: number;
}

async function runExtraction(
  input: DataFolderInput,
  options: ExtractOptions,
  secrets: SecretMasker,
  logger: Logger,
): Promise<ExtractionResult> {
  const { apiNode, configs } = await checkBeforeRequests(
    input,
    (unknown) => logger.warn(unknownKeyWarning(unknown)),
    options.signal,
  );
  // checked before any request, as GE's Executor does; one signer for every configuration
  const credentials = awsCredentials(input.parameters);
  const signer = credentials
    ? new AwsSigner(credentials, options.authRuntime?.now ?? SYSTEM_RUNTIME.now, secrets)
    : undefined;

  const state = new ExtractorState(input.state, (options.now ?? (() => Math.floor(Date.now() / 1000)))());
  const folder = new DataFolder(options.dataDir, options.dataRoot);
  await folder.guard.mkdir(folder.tablesDir);
  const output = new OutputWriter(folder.tablesDir, logger, state.inputStruct(), options.tmpDir, {
    guard: folder.guard,
  });
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
    reachedHosts: options.reachedHosts ?? new ReachedHosts(),
  };
  const totals: RunTotals = { jobs: [], requests: 0, retries: 0 };
  try {
    for (const [index, config] of configs.entries()) {
      const iterationRun = configs.length > 1 ? { ...run, logger: logger.child({ iteration: index + 1 }) } : run;
      if (configs.length > 1)
        iterationRun.logger.info(`Iteration ${groupThousands(index + 1)} of ${groupThousands(configs.length)}`);
      await runIteration(config, iterationRun, totals);
    }
    const tables = await output.finish(options.signal);
    run.progress.done();
    for (const t of tables)
      logger.info({ table: t.file, rows: t.rows }, `Wrote table ${displayText(t.file)}: ${plural(t.rows, 'row')}`);
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
  const { functions, logger, secrets, options } = run;
  const { contexts, api, auth, jobs } = prepareIteration(config, { ...run, authRuntime: options.authRuntime });
  const concurrency = childConcurrencies(jobs, api.concurrency);
  const client = new HttpClient({
    retry: new RetryPolicy(api.retry),
    connectTimeoutMs: api.connectTimeoutMs,
    requestTimeoutMs: api.requestTimeoutMs,
    logger,
    auth,
    signer: run.signer,
    tls: { caCertificate: api.caCertificate, clientCertificate: api.clientCertificate },
    // one adaptive limit for parallel pages and child jobs alike: the highest any of them asks for
    concurrency: Math.max(api.concurrency, ...concurrency.values()),
    maxRequestsPerSecond: api.maxRequestsPerSecond,
    allowedUrl: run.allowedUrl,
    maxResponseBytes: run.maxResponseBytes,
    signal: options.signal,
    reachedHosts: run.reachedHosts,
  });
  try {
    const parser = await run.output.parserFor(outputBucket(config, api.name), {
      incremental: config.get('incrementalOutput') === true,
      mappings: config.get('mappings'),
      compatLevel: compatLevel(config),
    });
    const runner = new JobRunner({
      api,
      client,
      parser,
      logger,
      progress: run.progress,
      compatLevel: compatLevel(config),
      functions,
      contexts,
      redact: (text) => secrets.mask(text),
      signal: options.signal,
      childConcurrency: (job) => concurrency.get(job) ?? 1,
    });
    const configUserData = evaluateUserData(config.get('userData'), 'userData', { functions, contexts });
    for (const job of jobs) {
      const paginator = createPaginator(api.pagination, 'parameters.api.pagination', job.scroller, (message) =>
        logger.warn(message),
      );
      const result = await runner.runTopLevel(job, configUserData, paginator);
      totals.jobs.push({ job: job.dataType, ...result });
    }
    run.output.captureStruct(parser);
  } finally {
    client.close();
    totals.requests += client.stats.requests;
    totals.retries += client.stats.retries;
  }
}
