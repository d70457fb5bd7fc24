import { UserError } from '../common/errors.js';
import { displayId, displayText } from '../common/log-text.js';
import type { SecretMasker } from '../common/secret-masker.js';
import { groupThousands } from '../common/text.js';
import { DataFolder, type DataFolderInput } from '../extractor/data-folder.js';
import type { JsonObject, JsonValue } from '../json/index.js';
import type { OpenedStore } from '../store/open-config-store.js';
import type { Configuration, Row } from '../store/types.js';
import { componentConfigFile, mergeRowConfiguration, splitConfiguration } from './effective-configuration.js';
import { planRows, type RowPlan } from './row-plan.js';
import { componentState } from './stored-state.js';
import { componentImageParameters, decryptedInput, loadConfiguration } from './unit-input.js';

/**
 * Planning a run (docs/design.md#one-run-pipeline): a stored configuration or a data folder
 * turned into the units a run runs, once — the disabled checks, the row choice (`--row-id`), the
 * root configuration merged under each row, every secret decrypted in memory and registered with
 * the run's masker (the one registration of a run). Everything here can fail before any request
 * and writes nothing, so `gex check` and `gex run --dry-run` stop after it.
 */

/** What a run runs: a configuration of a store, or a data folder the user made (its config.json). */
export type RunSource =
  | { kind: 'stored'; store: OpenedStore; componentId: string; configId: string; rowIds: string[] }
  | { kind: 'folder'; dataDir: string };

export interface PlanOptions {
  /** every secret of every unit is registered with it */
  masker: SecretMasker;
  /**
   * `run`: the rows a run runs (disabled rows skipped, a disabled configuration refused unless
   * `force`); `all`: every row, or those of `--row-id` (`gex check`: a disabled configuration is a warning)
   */
  select: 'run' | 'all';
  /** run a disabled configuration (gex run --force) */
  force?: boolean;
  /** told of the stages a run's summary and log follow (planning fails part-way, e.g. a secret that does not decrypt) */
  observer?: PlanObserver;
}

export interface PlanObserver {
  /** the stored configuration was read */
  loaded?(configuration: Configuration): void;
  /** the rows are chosen; their units are decrypted next */
  selected?(selection: StoredSelection): void;
  /** a unit cannot be planned (its secrets do not decrypt): the error is thrown next */
  unitFailed?(rowId: string | null, error: unknown): void;
}

export interface StoredSelection {
  configuration: Configuration;
  rows: RowPlan;
}

/** One configuration (a row with the root merged under it, or one without rows) as a run gives it to the extractor. */
export interface PlannedUnit {
  /** null: a configuration without rows, or a data folder */
  row: Row | null;
  /** the unit in a run's log: `row 1 of 2: users "Users"`, `configuration` */
  label: string;
  /** the unit in a check's report: `Row 1 of 2: users Users`, `Configuration 12`, `Data folder /data` */
  checkLabel: string;
  /** a disabled row that runs because --row-id named it */
  forced: boolean;
  /**
   * false: a disabled row a run skips, planned only because a check looks at every row
   * (`select: 'all'`); what is wrong with it is reported, and never fails the check
   */
  runs: boolean;
  /** what the extractor gets: secrets decrypted (in memory only) */
  input: DataFolderInput;
  /**
   * what the run writes into the unit's folder before it runs (a stored configuration's):
   * config.json and in/state.json with secrets as stored (encrypted); null: a data folder, read as is
   */
  folderInput: { config: JsonObject; state: JsonObject } | null;
  /** the state the store holds for the unit (what the run saves is merged over it); null for a data folder */
  storedState: JsonValue;
  /** `storage` of the unit's configuration (Keboola's input and output mapping), empty for a data folder */
  storage: JsonObject;
  /** the configuration has `processors`, which never reach the component */
  hasProcessors: boolean;
}

export interface RunPlan {
  source: RunSource['kind'];
  /** the stored configuration (null for a data folder) */
  configuration: Configuration | null;
  /** units to run, in run order */
  units: PlannedUnit[];
  /** the configuration's rows that do not run, and why (empty with `select: 'all'`) */
  skipped: Array<{ row: Row; reason: string }>;
  /** what a check reports besides its units (a disabled configuration, no row to run) */
  warnings: string[];
  /**
   * rows a run skips (disabled) whose configuration could not be planned (a secret that does not
   * decrypt): reported by a check in their place among the units (`index`), never run
   */
  unplanned: Array<{ index: number; row: Row; checkLabel: string; error: UserError }>;
}

/** Plans a run of `source`; the errors are those a run fails with before its first request. */
export async function planRun(source: RunSource, options: PlanOptions): Promise<RunPlan> {
  return source.kind === 'folder' ? planFolder(source.dataDir, options.masker) : planStored(source, options);
}

async function planFolder(dataDir: string, masker: SecretMasker): Promise<RunPlan> {
  const folder = new DataFolder(dataDir);
  const input = await folder.read();
  for (const value of [input.parameters, input.authorization, input.state]) masker.addFromConfig(value);
  const unit: PlannedUnit = {
    row: null,
    label: 'configuration',
    checkLabel: `Data folder ${folder.dir}`,
    forced: false,
    runs: true,
    input,
    folderInput: null,
    storedState: null,
    storage: new Map(),
    hasProcessors: false,
  };
  return { source: 'folder', configuration: null, units: [unit], skipped: [], warnings: [], unplanned: [] };
}

async function planStored(source: Extract<RunSource, { kind: 'stored' }>, options: PlanOptions): Promise<RunPlan> {
  const { store, componentId, configId, rowIds } = source;
  const configuration = await loadConfiguration(store, componentId, configId);
  options.observer?.loaded?.(configuration);
  const warnings: string[] = [];
  if (configuration.isDisabled) {
    if (options.select === 'run' && !options.force) {
      throw new UserError(
        'GEX_CONFIG_DISABLED',
        `Configuration ${displayId(configId)} is disabled. Enable it in the store, or run it anyway with --force.`,
      );
    }
    if (options.select === 'all')
      warnings.push(`Configuration ${displayId(configId)} is disabled: a run needs --force`);
  }
  const imageParameters = await componentImageParameters(store, componentId);
  // planRows also refuses unknown --row-id values, listing the rows that exist
  const rows = planRows(configuration, rowIds);
  options.observer?.selected?.({ configuration, rows });
  const plan: RunPlan = { source: 'stored', configuration, units: [], skipped: [], warnings, unplanned: [] };

  const unitOf = async (
    row: Row | null,
    labels: { label: string; checkLabel: string },
    forced: boolean,
  ): Promise<PlannedUnit> => {
    const node = row
      ? mergeRowConfiguration(configuration.configuration, row.configuration)
      : configuration.configuration;
    const stored = splitConfiguration(node);
    const storedState = componentState(row ? row.state : configuration.state);
    const rowId = row?.id ?? null;
    let input: DataFolderInput;
    try {
      input = await decryptedInput(store, componentId, stored, storedState, imageParameters, options.masker, rowId);
    } catch (error) {
      options.observer?.unitFailed?.(rowId, error);
      throw error;
    }
    return {
      row,
      ...labels,
      forced,
      runs: !row?.isDisabled || forced,
      input,
      folderInput: { config: componentConfigFile(stored, imageParameters), state: storedState },
      storedState: row ? row.state : configuration.state,
      storage: stored.storage,
      hasProcessors: stored.processors !== undefined,
    };
  };

  if (configuration.rows.length === 0) {
    plan.units.push(
      await unitOf(null, { label: 'configuration', checkLabel: `Configuration ${displayId(configId)}` }, false),
    );
    return plan;
  }
  const all = options.select === 'all' && rowIds.length === 0;
  const chosen = all ? configuration.rows.map((row) => ({ row, forced: false })) : rows.run;
  if (!all) plan.skipped = rows.skipped;
  if (chosen.length === 0) warnings.push('No row would run: every row is disabled');
  // every unit is decrypted before any runs: a secret that does not decrypt fails the run before its first request
  for (const [i, { row, forced }] of chosen.entries()) {
    const name = row.name ? ` ${displayText(row.name)}` : '';
    const label = `row ${groupThousands(i + 1)} of ${groupThousands(chosen.length)}: ${displayId(row.id)}${name}`;
    const checkLabel = `Row ${i + 1} of ${chosen.length}: ${displayId(row.id)}${name}${row.isDisabled ? ' (disabled)' : ''}`;
    try {
      plan.units.push(await unitOf(row, { label, checkLabel }, forced));
    } catch (error) {
      // a row no run runs cannot stop the check of the others: its problem is reported with it
      if (!(row.isDisabled && !forced && error instanceof UserError)) throw error;
      plan.unplanned.push({ index: i, row, checkLabel, error });
    }
  }
  return plan;
}
