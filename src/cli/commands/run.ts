import { writeFile } from 'node:fs/promises';
import type { Argv } from 'yargs';
import { errorKind, exitCodeOf, UserError } from '../../common/errors.js';
import { limitHeapGrowth } from '../../common/heap-growth.js';
import type { Logger } from '../../common/logger.js';
import type { ProgressLine } from '../../common/progress-line.js';
import type { SecretMasker } from '../../common/secret-masker.js';
import { GENERIC_EXTRACTOR_ID } from '../../store/builtin-components.js';
import type { RunSummary } from '../../runner/runner.js';
import { createCliLogging, type LoggingArgs } from '../logging.js';

export interface RunArgs extends LoggingArgs {
  'data-dir': string;
  'config-id'?: string;
  'component-id': string;
  'row-id': string[];
  store?: string;
  token?: string;
  summary?: string;
  force: boolean;
}

const env = process.env;

export function runCommand(yargs: Argv): Argv {
  return yargs.command<RunArgs>(
    'run',
    'Run an extraction: a stored configuration (--config-id) row by row, or a data folder (config.json → out/tables)',
    (y) =>
      y
        .option('data-dir', { type: 'string', default: env.KBC_DATADIR || '/data', defaultDescription: '$KBC_DATADIR or /data', describe: 'the data folder (Keboola common interface)' })
        .option('config-id', { type: 'string', default: env.KBC_CONFIGID || undefined, defaultDescription: '$KBC_CONFIGID', describe: 'run this stored configuration' })
        .option('component-id', { type: 'string', default: env.KBC_COMPONENTID || GENERIC_EXTRACTOR_ID, defaultDescription: `$KBC_COMPONENTID or ${GENERIC_EXTRACTOR_ID}` })
        .option('row-id', {
          type: 'string',
          array: true,
          default: env.KBC_CONFIGROWID ? env.KBC_CONFIGROWID.split(',').map((s) => s.trim()).filter(Boolean) : [],
          defaultDescription: '$KBC_CONFIGROWID',
          describe: 'run only this row (repeatable); disabled rows named here run too',
        })
        .option('store', { type: 'string', describe: 'a SQLite file, a postgres:// database or an http(s) Storage API (else $KBC_URL, $GEX_STORE, gex-store.sqlite)' })
        .option('token', { type: 'string', describe: 'Storage API token for a remote store ($KBC_TOKEN)' })
        .option('summary', { type: 'string', describe: 'write a JSON summary of the run to this file' })
        .option('force', { type: 'boolean', default: false, describe: 'run a disabled configuration' }) as Argv<RunArgs>,
    async (args) => {
      process.exitCode = await runFromCli(args);
    },
  );
}

/** `gex run`: returns the exit code (0 ok, 1 user error, 2 application error). */
export async function runFromCli(args: RunArgs): Promise<number> {
  limitHeapGrowth();
  const { logger, masker, progress } = createCliLogging(args);
  const started = Date.now();
  let summary: RunSummary | undefined;
  try {
    if (args['config-id']) {
      // loaded on demand: each command pays only for what it uses at start-up
      const [{ openConfigStore, resolveStoreLocation }, { ConfigurationRunner }] = await Promise.all([
        import('../../store/open-config-store.js'),
        import('../../runner/runner.js'),
      ]);
      const location = args.store || env.KBC_URL || resolveStoreLocation(undefined);
      const store = await openConfigStore(location, { token: args.token ?? env.KBC_TOKEN, logger });
      try {
        const runner = new ConfigurationRunner({
          store,
          componentId: args['component-id'],
          configId: args['config-id'],
          rowIds: args['row-id'],
          dataDir: args['data-dir'],
          logger,
          masker,
          progressLine: progress,
          force: args.force,
        });
        summary = runner.result;
        await runner.run();
        await writeSummary(args.summary, summary, logger, masker);
      } finally {
        await store.close();
      }
    } else {
      await runDataDir(args, logger, masker, progress);
    }
    return 0;
  } catch (error) {
    progress.clear();
    if (error instanceof UserError) logger.error(error.message);
    else logger.error({ err: error }, `Application error: ${(error as Error).message}`);
    await writeSummary(args.summary, summary ?? baseSummary(args, started, error), logger, masker);
    return exitCodeOf(error);
  }
}

async function runDataDir(args: RunArgs, logger: Logger, masker: SecretMasker, progress: ProgressLine): Promise<void> {
  const started = Date.now();
  const [{ readDataDir, writeStateFile }, { extract }] = await Promise.all([import('../../extractor/config/data-dir.js'), import('../../extractor/extractor.js')]);
  const input = await readDataDir(args['data-dir']);
  masker.addFromConfig(input.parameters);
  masker.addFromConfig(input.authorization);
  masker.addFromConfig(input.state);
  const result = await extract(input, { dataDir: args['data-dir'], logger, masker, progressLine: progress });
  await writeStateFile(args['data-dir'], result.stateText);
  const records = result.jobs.reduce((n, j) => n + j.records, 0);
  logger.info(
    `Extraction finished: ${result.tables.length} tables, ${records} records, ${result.requests} requests in ${(result.durationMs / 1000).toFixed(1)} s. ` +
      `Tables are in ${args['data-dir']}/out/tables`,
  );
  await writeSummary(args.summary, { ...baseSummary(args, started), rowsRun: 1, rows: [{ id: null, name: '', folder: '.', status: 'success', stateSaved: false, requests: result.requests, records, tables: result.tables.map((t) => ({ file: `out/tables/${t.file}`, rows: t.rows })), durationMs: result.durationMs }] }, logger, masker);
}

/** The summary of a data-folder run, or of a run that failed before it started. */
function baseSummary(args: RunArgs, started: number, error?: unknown): RunSummary {
  return {
    componentId: args['component-id'],
    configId: args['config-id'] ?? '',
    configVersion: null,
    status: error ? 'error' : 'success',
    message: error ? (error as Error).message : 'Component processing finished.',
    rowsRun: 0,
    rowsSkipped: 0,
    rows: [],
    stateSaved: false,
    durationMs: Date.now() - started,
    error: error ? { kind: errorKind(error), message: (error as Error).message } : undefined,
  };
}

/** The summary as JSON, secrets hidden in the whole text (error messages may quote an API's answer). */
async function writeSummary(file: string | undefined, summary: RunSummary, logger: Logger, masker: SecretMasker): Promise<void> {
  if (!file) return;
  try {
    await writeFile(file, masker.mask(`${JSON.stringify(summary, null, 2)}\n`));
  } catch (error) {
    logger.warn(`Cannot write the summary to ${file}: ${(error as Error).message}`);
  }
}
