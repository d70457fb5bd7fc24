import type { Argv } from 'yargs';
import { cancellationOf } from '../../common/cancellation.js';
import { exitCodeOf, UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';
import type { Logger } from '../../common/logger.js';
import { SecretMasker } from '../../common/secret-masker.js';
import type { CheckUnit } from '../../runner/check-units.js';
import { builtinComponents } from '../builtin-components.js';
import { targetOptions, type TargetArgs } from '../target-options.js';
import { cancelOnStop } from '../stop-signals.js';
import { dataFolderOfRun } from '../data-dir-default.js';
import { createCliLogger } from '../logging.js';

interface CheckArgs extends TargetArgs {
  request: boolean;
  json: boolean;
}

export interface CheckMode {
  /** `run`: the rows a run would run (dry run); `all`: every row, or those named */
  select: 'run' | 'all';
  /** send each top-level job's first request */
  sendRequests: boolean;
  json: boolean;
  /** a disabled configuration is run anyway (gex run --force) */
  force?: boolean;
}

const env = process.env;

export function checkCommand(yargs: Argv): Argv {
  return yargs.command<CheckArgs>(
    'check',
    'Check a configuration without running it: validation, unknown keys, the first request of each job (--request: send it)',
    (y) =>
      targetOptions(y, 'check')
        .option('request', { type: 'boolean', default: false, describe: 'send the first request of each top-level job and describe the answer (nothing is written)' })
        .option('json', { type: 'boolean', default: false, describe: 'print the report as JSON' }) as Argv<CheckArgs>,
    async (args) => {
      process.exitCode = await checkFromCli(args, { select: 'all', sendRequests: args.request, json: args.json });
    },
  );
}

/**
 * Checks a data folder or a stored configuration and prints the report on stdout (logs go to
 * stderr, so that `--json` output is JSON only). Writes nothing: not the data folder, not a lock,
 * not a state. Returns the exit code: 0 valid (warnings allowed), 1 a user error, 2 a fault.
 */
export async function checkFromCli(args: TargetArgs, mode: CheckMode): Promise<number> {
  const masker = new SecretMasker();
  const logger = createCliLogger(args, masker, { stdout: process.stderr });
  const signal = cancelOnStop();
  try {
    const [{ checkInput }, { renderJson, renderText }, { reportOk }] = await Promise.all([
      import('../../extractor/check/check-input.js'),
      import('../../extractor/check/render.js'),
      import('../../extractor/check/report.js'),
    ]);
    const { units, warnings } = await unitsToCheck(args, mode, masker, logger);
    const checked = [];
    for (const unit of units) {
      checked.push(await checkInput(unit.input, unit.label, unit.rowId, { logger, masker, sendRequests: mode.sendRequests ? {} : undefined, signal }));
    }
    const report = { ok: reportOk(checked), units: checked, warnings: warnings.map((w) => masker.mask(w)) };
    process.stdout.write(mode.json ? renderJson(report, masker) : renderText(report, masker));
    return report.ok ? 0 : 1;
  } catch (error) {
    const cancelled = cancellationOf(signal);
    if (cancelled) {
      logger.warn(cancelled.message);
      return cancelled.exitCode;
    }
    if (error instanceof UserError) logger.error(displayText(error.message));
    else logger.error({ err: error }, `Application error: ${(error as Error).message}`);
    return exitCodeOf(error);
  }
}

/** The configurations to check: the data folder's config.json, or a stored configuration's rows (merged as the runner merges them). */
async function unitsToCheck(args: TargetArgs, mode: CheckMode, masker: SecretMasker, logger: Logger): Promise<{ units: CheckUnit[]; warnings: string[] }> {
  if (!args['config-id']) {
    const { DataFolder } = await import('../../extractor/data-folder.js');
    const folder = new DataFolder(dataFolderOfRun(args['data-dir'], env));
    return { units: [{ label: `Data folder ${folder.dir}`, rowId: null, input: await folder.read() }], warnings: [] };
  }
  const [{ openConfigStore, storeLocationFromArgs }, { storedUnits }] = await Promise.all([import('../../store/open-config-store.js'), import('../../runner/check-units.js')]);
  const location = storeLocationFromArgs(args.store, env);
  // nothing is created: a store that does not exist is an error
  const store = await openConfigStore(location, { token: args.token ?? env.KBC_TOKEN, logger, builtinComponents: builtinComponents(), mustExist: true });
  try {
    return await storedUnits({ store, componentId: args['component-id'], configId: args['config-id'], rowIds: args['row-id'], masker, select: mode.select, force: mode.force });
  } finally {
    await store.close();
  }
}
