import type { Argv } from 'yargs';
import { exitCodeOf, UserError } from '../../common/errors.js';
import { readDataDir, writeStateFile } from '../../extractor/config/data-dir.js';
import { extract } from '../../extractor/extractor.js';
import { createCliLogging, type LoggingArgs } from '../logging.js';

interface RunArgs extends LoggingArgs {
  'data-dir': string;
}

export function runCommand(yargs: Argv): Argv {
  return yargs.command<RunArgs>(
    'run',
    'Run a Generic Extractor configuration on a data folder (config.json, in/state.json → out/tables, out/state.json)',
    (y) =>
      y.option('data-dir', {
        type: 'string',
        default: process.env.KBC_DATADIR || '/data',
        defaultDescription: '$KBC_DATADIR or /data',
        describe: 'the data folder (Keboola common interface)',
      }) as Argv<RunArgs>,
    async (args) => {
      process.exitCode = await runDataDir(args);
    },
  );
}

/** Runs the extractor on a data folder and returns the exit code (0 ok, 1 user error, 2 application error). */
export async function runDataDir(args: RunArgs): Promise<number> {
  const { logger, masker, progress } = createCliLogging(args);
  try {
    const input = await readDataDir(args['data-dir']);
    masker.addFromConfig(input.parameters);
    masker.addFromConfig(input.authorization);
    masker.addFromConfig(input.state);
    const result = await extract(input, { dataDir: args['data-dir'], logger, progressLine: progress });
    await writeStateFile(args['data-dir'], result.stateText);
    logger.info(
      `Extraction finished: ${result.tables.length} tables, ${result.jobs.reduce((n, j) => n + j.records, 0)} records, ` +
        `${result.requests} requests in ${(result.durationMs / 1000).toFixed(1)} s. Tables are in ${args['data-dir']}/out/tables`,
    );
    return 0;
  } catch (error) {
    progress.clear();
    if (error instanceof UserError) logger.error(error.message);
    else logger.error({ err: error }, `Application error: ${(error as Error).message}`);
    return exitCodeOf(error);
  }
}
