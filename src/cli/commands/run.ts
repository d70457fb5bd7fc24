import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Argv } from 'yargs';
import { cancellationOf } from '../../common/cancellation.js';
import { JOB_FILE_OPTION, readJobFile } from '../../jobs/job-run-contract.js';
import { ApplicationError, errorLogFields, exitCodeOf, UserError } from '../../common/errors.js';
import { limitHeapGrowth, limitYoungGeneration } from '../../common/heap-growth.js';
import type { Logger } from '../../common/logger.js';
import type { SecretMasker } from '../../common/secret-masker.js';
import { builtinComponents } from '../builtin-components.js';
import { tokenFromArgs } from '../options/store-options.js';
import { lockForRun, parseWaitOption } from '../../runner/run-lock/run-locks.js';
import type { RunTarget } from '../../runner/runner.js';
import { recordLateFailure, summaryOfUnstartedRun, type RunSummary } from '../../runner/run-summary.js';
import { verifyTablesOnDisk } from '../../runner/verify-tables.js';
import { dataFolderOfRun, defaultDataDir, describeDataDir, type DataDirChoice } from '../options/data-dir-default.js';
import { isInside } from '../../common/safe-path.js';
import { FolderGuard } from '../../extractor/folder-guard.js';
import { createCliLogging } from '../process/logging.js';
import { logTableLocations } from '../output/table-report.js';
import { targetOptions, type TargetArgs } from '../options/target-options.js';
import { cancelOnStop } from '../process/stop-signals.js';

export interface RunArgs extends TargetArgs {
  summary?: string;
  force: boolean;
  wait?: string;
  'dry-run': boolean;
  /** false (--no-load): tables stay files; no Storage table is read or written */
  load: boolean;
  /** project of the embedded store used without a token (a queue job's project) */
  project?: string;
  /** a queue job's run: what to run, from the file its worker wrote (job-run-contract.ts) */
  'job-file'?: string;
}

const env = process.env;

export function runCommand(yargs: Argv): Argv {
  return yargs.command<RunArgs>(
    'run',
    'Run an extraction: a stored configuration (--config-id) row by row, or a data folder (config.json → out/tables)',
    (y) =>
      targetOptions(y, 'run')
        .option('summary', { type: 'string', describe: 'write a JSON summary of the run to this file' })
        .option('force', { type: 'boolean', default: false, describe: 'run a disabled configuration' })
        .option('project', {
          type: 'string',
          describe: 'project of the embedded store when used without a token (default: "default")',
        })
        .option('load', {
          type: 'boolean',
          default: true,
          describe:
            "load each row's out/tables into the store's Storage tables (and export its input tables); --no-load keeps files only",
        })
        .option('dry-run', {
          type: 'boolean',
          default: false,
          describe: 'print the first request of each job a run would send, then stop: nothing is sent or written',
        })
        .option(JOB_FILE_OPTION, {
          type: 'string',
          hidden: true,
          describe: "a queue job's run (its worker writes the file): component, configuration, project, rows, force",
        })
        .option('wait', {
          type: 'string',
          describe:
            'when another run holds the data folder or the configuration, wait for it: up to SECONDS, or an hour without a value (default: fail at once)',
        })
        .example(
          '$0 run --config-id 123 --store gex-store.sqlite --data-dir ./data',
          'run every enabled row of configuration 123 of the local store',
        )
        .example(
          '$0 run --config-id 123 --row-id users --store https://gex.example.com --token $KBC_TOKEN',
          'run one row of a configuration kept by a Storage API',
        )
        .example('$0 run --data-dir ./data --summary summary.json', 'run ./data/config.json and write a JSON summary'),
    async (args) => {
      process.exitCode = args['dry-run'] ? await dryRunFromCli(args) : await runFromCli(args);
    },
  );
}

/** `gex run --dry-run`: the check of what a run would run (its rows), without sending a request. */
async function dryRunFromCli(args: RunArgs): Promise<number> {
  const { checkFromCli } = await import('./check.js');
  return checkFromCli(args, { select: 'run', sendRequests: false, json: false, force: args.force });
}

/** `gex run`: options, locks and output; the run itself is the runner's (src/runner/runner.ts). */
export async function runFromCli(args: RunArgs): Promise<number> {
  limitYoungGeneration();
  limitHeapGrowth();
  const { logger, masker, progress } = createCliLogging(args);
  const started = Date.now();
  const signal = cancelOnStop();
  let summary: RunSummary | undefined;
  /** the data folder once known: a summary file inside it is written as every file there is */
  let summaryDataDir: string | undefined;
  const writeSummary = (file: string | undefined, written: RunSummary) =>
    writeSummaryFile(file, written, logger, masker, summaryDataDir);
  try {
    const waitMs = parseWaitOption(args.wait);
    const job = args[JOB_FILE_OPTION] === undefined ? undefined : await jobRunOf(args[JOB_FILE_OPTION]);
    if (job) {
      // the ids come from the job file, exactly: never from a command line that could read them as options
      Object.assign(args, {
        'config-id': job.configId,
        'component-id': job.componentId,
        'row-id': job.rowIds,
        project: job.project,
        force: job.force,
      });
    }
    // loaded on demand: each command pays only for what it uses at start-up
    const { Runner } = await import('../../runner/runner.js');
    const run = async (dataDir: string, target: RunTarget) => {
      // a job's data folder is removed when the job ends: its log names no folder in it
      const temporaryDataDir = job !== undefined;
      const runner = new Runner({ target, dataDir, logger, masker, progressLine: progress, signal, temporaryDataDir });
      summary = runner.result;
      await runner.run();
      verifyTablesOnDisk(dataDir, summary);
      if (target.kind === 'stored' && !temporaryDataDir) logTableLocations(logger, summary, dataDir);
      await writeSummary(args.summary, summary);
    };
    if (args['config-id']) {
      const dataDir = args['data-dir'] ?? defaultDataFolder(logger);
      summaryDataDir = dataDir;
      const { openConfigStore, storeLocationFromArgs } = await import('../../store/open-config-store.js');
      const location = storeLocationFromArgs(args.store, env);
      // a run creates no store: a mistyped --store is "no store at …", not a new empty store and key
      const store = await openConfigStore(location, {
        ...tokenFromArgs(args, env),
        project: args.project,
        logger,
        builtinComponents: builtinComponents(),
        mustExist: true,
        decrypts: true,
      });
      let unlock: () => Promise<void> = async () => undefined;
      try {
        unlock = await lockForRun({
          dataDir,
          stored: { runLocks: store.runLocks, componentId: args['component-id'], configId: args['config-id'] },
          running: `configuration ${args['config-id']} of ${args['component-id']}`,
          waitMs,
          signal,
          logger,
        });
        const { 'component-id': componentId, 'config-id': configId, 'row-id': rowIds, force, load } = args;
        await run(dataDir, { kind: 'stored', store, componentId, configId, rowIds, force, load });
      } finally {
        await unlock();
        await store.close();
      }
    } else {
      const dataDir = dataFolderOfRun(args['data-dir'], env, existsSync, (choice) =>
        logDataFolderChoice(logger, choice),
      );
      summaryDataDir = dataDir;
      // a missing data folder is reported as before (by reading its config.json), not created by the lock
      const locked = existsSync(dataDir);
      const unlock = locked
        ? await lockForRun({ dataDir, running: 'the config.json of the data folder', waitMs, signal, logger })
        : async () => undefined;
      try {
        await run(dataDir, { kind: 'folder', componentId: args['component-id'] });
      } finally {
        await unlock();
      }
    }
    return 0;
  } catch (error) {
    progress.clear();
    const cancelled = cancellationOf(signal);
    if (cancelled) {
      logger.warn({ status: 'cancelled' }, `${cancelled.message}: no state saved, no partial table left`);
      await writeSummary(args.summary, summary ?? unstartedSummary(args, started, cancelled));
      return cancelled.exitCode;
    }
    if (error instanceof UserError) logger.error(errorLogFields(error), error.message);
    else logger.error({ err: error, ...errorLogFields(error) }, `Application error: ${(error as Error).message}`);
    // a failure after the runner finished (its tables gone from disk) still fails the summary
    if (summary) recordLateFailure(summary, error);
    await writeSummary(args.summary, summary ?? unstartedSummary(args, started, error));
    return exitCodeOf(error);
  }
}

/** The job a queue worker wrote for this run; an unreadable file is gex's own fault (exit 2). */
async function jobRunOf(file: string) {
  try {
    return await readJobFile(file);
  } catch (error) {
    throw new ApplicationError('GEX_INTERNAL', `Cannot read the job file ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function unstartedSummary(args: RunArgs, started: number, error: unknown): RunSummary {
  return summaryOfUnstartedRun(args['component-id'], args['config-id'] ?? '', Date.now() - started, error);
}

/**
 * The data folder of a stored configuration's run without --data-dir (see defaultDataDir), said in
 * the log: which folder and why.
 */
function defaultDataFolder(logger: Logger): string {
  const choice = defaultDataDir(env);
  logDataFolderChoice(logger, choice);
  return choice.dir;
}

function logDataFolderChoice(logger: Logger, choice: DataDirChoice): void {
  logger.info(
    { dataDir: path.resolve(choice.dir) },
    `Data folder ${describeDataDir(choice.dir)}: --data-dir was not given and ${choice.source}${choice.exists ? '' : '; gex creates it'}`,
  );
}

/**
 * The summary as JSON, secrets hidden in the whole text (error messages may quote an API's
 * answer). A summary file named inside the data folder is written as every file there is (no
 * symbolic link followed); anywhere else it is the user's path, written as named (/dev/stdout too).
 */
async function writeSummaryFile(
  file: string | undefined,
  summary: RunSummary,
  logger: Logger,
  masker: SecretMasker,
  dataDir: string | undefined,
): Promise<void> {
  if (!file) return;
  try {
    const text = masker.mask(`${JSON.stringify(summary, null, 2)}\n`);
    if (dataDir !== undefined && isInside(dataDir, file))
      await new FolderGuard(dataDir).writeFile(path.resolve(file), text);
    else await writeFile(file, text);
  } catch (error) {
    logger.warn(`Cannot write the summary to ${file}: ${(error as Error).message}`);
  }
}
