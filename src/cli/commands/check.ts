import type { Argv } from 'yargs';
import { cancellationOf } from '../../common/cancellation.js';
import { errorLogFields, exitCodeOf, UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';
import type { Logger } from '../../common/logger.js';
import { SecretMasker } from '../../common/secret-masker.js';
import type { UnitCheck } from '../../extractor/check/report.js';
import type { PlannedUnit, RunPlan } from '../../runner/run-plan.js';
import { builtinComponents } from '../builtin-components.js';
import { tokenFromArgs } from '../options/store-options.js';
import { targetOptions, type TargetArgs } from '../options/target-options.js';
import { cancelOnStop } from '../process/stop-signals.js';
import { dataFolderOfRun } from '../options/data-dir-default.js';
import { createCliLogger } from '../process/logging.js';

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
        .option('request', {
          type: 'boolean',
          default: false,
          describe: 'send the first request of each top-level job and describe the answer (nothing is written)',
        })
        .option('json', { type: 'boolean', default: false, describe: 'print the report as JSON' }),
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
    const { units, warnings, unplanned } = await unitsToCheck(args, mode, masker, logger);
    const tablePlans = await tablesOf(args, units);
    const checked: UnitCheck[] = [];
    for (const [i, unit] of units.entries()) {
      const result = await checkInput(unit.input, unit.checkLabel, unit.row?.id ?? null, {
        logger,
        masker,
        sendRequests: mode.sendRequests ? {} : undefined,
        signal,
      });
      result.runs = unit.runs;
      const plan = tablePlans?.[i];
      if (plan && 'lines' in plan) result.tables = plan.lines;
      else if (plan) {
        result.valid = false;
        result.error ??= { message: plan.error.message, code: plan.error.gexCode };
      }
      checked.push(result);
    }
    // disabled rows that could not even be planned (a secret that does not decrypt), in their place
    for (const { index, row, checkLabel, error } of unplanned) {
      checked.splice(index, 0, {
        label: checkLabel,
        rowId: row.id,
        runs: false,
        valid: false,
        error: { message: masker.mask(error.message), code: error.gexCode },
        warnings: [],
        jobs: [],
      });
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
    if (error instanceof UserError) logger.error(errorLogFields(error), displayText(error.message));
    else logger.error({ err: error, ...errorLogFields(error) }, `Application error: ${(error as Error).message}`);
    return exitCodeOf(error);
  }
}

/** A stored configuration's table destinations per unit (output and input mapping); undefined for a data folder. */
async function tablesOf(args: TargetArgs, units: PlannedUnit[]) {
  if (!args['config-id'] || units.length === 0) return undefined;
  const [{ planTables }, { defaultBucketId }, { unitName }, { outputBucketsOf }] = await Promise.all([
    import('../../runner/output-mapping-config.js'),
    import('../../runner/default-bucket.js'),
    import('../../runner/input-mapping.js'),
    import('../../extractor/pre-request-checks.js'),
  ]);
  let bucket: string | null = null;
  try {
    bucket = defaultBucketId(args['component-id'], args['config-id']);
  } catch {
    // an id a bucket cannot hold: the run says so only when a table needs the default bucket
  }
  return planTables(
    units.map((u) => ({
      label: u.label,
      storage: u.storage,
      unit: unitName(u.row?.id ?? null),
      outputBuckets: outputBucketsOf(u.input.parameters),
    })),
    bucket,
  );
}

/**
 * The configurations to check, planned as a run plans them (runner/run-plan.ts): the data folder's
 * config.json, or a stored configuration's rows with the root merged under each.
 */
async function unitsToCheck(
  args: TargetArgs,
  mode: CheckMode,
  masker: SecretMasker,
  logger: Logger,
): Promise<Pick<RunPlan, 'units' | 'warnings' | 'unplanned'>> {
  const { planRun } = await import('../../runner/run-plan.js');
  const planOptions = { masker, select: mode.select, force: mode.force };
  if (!args['config-id'])
    return planRun({ kind: 'folder', dataDir: dataFolderOfRun(args['data-dir'], env) }, planOptions);
  const { openConfigStore, storeLocationFromArgs } = await import('../../store/open-config-store.js');
  const location = storeLocationFromArgs(args.store, env);
  // nothing is created: a store that does not exist is an error
  const store = await openConfigStore(location, {
    ...tokenFromArgs(args, env),
    logger,
    builtinComponents: builtinComponents(),
    mustExist: true,
    decrypts: true,
  });
  try {
    const source = {
      kind: 'stored',
      store,
      componentId: args['component-id'],
      configId: args['config-id'],
      rowIds: args['row-id'],
    } as const;
    return await planRun(source, planOptions);
  } finally {
    await store.close();
  }
}
