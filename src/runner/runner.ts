import path from 'node:path';
import { cancellationOf } from '../common/cancellation.js';
import { errorLogFields, errorReport, UserError, type ErrorReport } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { displayId, displayText, quoteForLog } from '../common/log-text.js';
import { formatSeconds, groupThousands, plural } from '../common/text.js';
import type { ProgressLine } from '../common/progress-line.js';
import type { SecretMasker } from '../common/secret-masker.js';
import type { DataFolder, DataFolderInput } from '../extractor/data-folder.js';
import { extract } from '../extractor/extractor.js';
import { stringifyExact, type JsonObject, type JsonValue } from '../json/index.js';
import type { OpenedStore } from '../store/open-config-store.js';
import type { StateWrite } from '../store/config-store.js';
import { StateSaveFailed, type StateOwner } from '../store/state-save-failed.js';
import type { Row } from '../store/types.js';
import { componentConfigFile, mergeRowConfiguration, splitConfiguration, type ComponentConfig } from './effective-configuration.js';
import { planRows } from './row-plan.js';
import { jobRunSummaries, type JobRunSummary } from './job-summary.js';
import { RunFolders, type RunFolder } from './run-folders.js';
import { componentImageParameters, decryptedInput, loadConfiguration } from './unit-input.js';
import { componentState, redactSecrets, storedState } from './stored-state.js';
import { exportInputTables, parseInputTables, unitName as unitNameOf, type InputTable } from './input-mapping.js';
import { OutputMapping } from './output-mapping.js';
import type { ProjectTables } from '../store/tables/index.js';

export interface RunOptions {
  store: OpenedStore;
  componentId: string;
  configId: string;
  /** run only these rows (disabled ones too) */
  rowIds: string[];
  dataDir: string;
  logger: Logger;
  masker: SecretMasker;
  progressLine?: ProgressLine;
  /** run a disabled configuration */
  force?: boolean;
  /** stops the run (a stop signal): the current row is abandoned, no state is saved */
  signal?: AbortSignal;
  /** the clock in milliseconds (durations, and each row's run start in its state); tests pin it */
  now?: () => number;
  /**
   * Storage table mapping (default true): each row's input tables exported into its in/tables
   * before it runs, its out/tables loaded into the project's tables after it succeeds. Needs a
   * store with tables (the embedded one); false, or a remote store, keeps files only.
   */
  load?: boolean;
}

export interface TableSummary {
  file: string;
  rows: number;
  /** the file was loaded into the project's Storage tables (see tableId) */
  loaded: boolean;
  tableId?: string;
}

/** A table of the row's input mapping, exported into its folder before it ran. */
export interface InputTableSummary {
  source: string;
  /** relative to the data folder */
  file: string;
  rows: number;
}

export interface RowSummary {
  /** null for a configuration without rows */
  id: string | null;
  name: string;
  /** the row's folder relative to the data folder: `rows/<id encoded as one segment>` (`.` without rows) */
  folder: string;
  status: 'success' | 'failed' | 'cancelled' | 'skipped' | 'not run';
  reason?: string;
  requests: number;
  records: number;
  tables: TableSummary[];
  /** the row's top-level jobs in run order (empty unless the extraction finished) */
  jobs: JobRunSummary[];
  /** present when the row had input tables that were exported */
  inputTables?: InputTableSummary[];
  durationMs: number;
  /** the component state the run produced (saved only when every row succeeded) */
  state?: unknown;
  /** the store holds the state this run produced — or, when putting it back failed, may hold it (see `stateRollback`) */
  stateSaved: boolean;
}

/**
 * A failed save of several states on a remote Storage API (saved one by one): the states saved
 * before the failure were put back — all of them (`complete`) or not (`incomplete`).
 */
export interface StateRollbackSummary {
  status: 'complete' | 'incomplete';
  /** the row whose save failed (null: the configuration's own state) */
  failedRowId: string | null;
  restoredRowIds: Array<string | null>;
  notRestored: Array<{ rowId: string | null; reason: string }>;
}

export interface RunSummary {
  componentId: string;
  configId: string;
  configVersion: number | null;
  status: 'success' | 'error' | 'cancelled';
  message: string;
  rowsRun: number;
  rowsSkipped: number;
  rows: RowSummary[];
  /** every state the run produced is saved (rows' `stateSaved` say which are) */
  stateSaved: boolean;
  /** set when saving states through a remote store failed part-way */
  stateRollback?: StateRollbackSummary;
  durationMs: number;
  error?: ErrorReport;
}

/** What a unit's run produced: its component state and the tables (files in out/tables) it wrote. */
interface UnitResult {
  state: JsonValue;
  tables: string[];
}

interface Unit {
  row: Row | null;
  label: string;
  folder: RunFolder;
  configuration: JsonValue;
  state: JsonValue;
}

/** A unit ready to run: its configuration split into parts and its input decrypted (in memory). */
interface PreparedUnit extends Unit {
  stored: ComponentConfig;
  storedComponentState: JsonObject;
  input: DataFolderInput;
}

/**
 * Runs a stored configuration as Keboola's runner does (docs/design.md#a-run-of-a-stored-configuration): rows one after another in the
 * configuration's order, each in its own folder with the root configuration merged under it;
 * state is saved back through the store only when every row succeeded.
 */
export class ConfigurationRunner {
  private readonly summary: RunSummary;
  private readonly now: () => number;
  private readonly started: number;
  private readonly folders: RunFolders;
  /** every line of the run names its configuration (JSON log lines: as fields) */
  private readonly logger: Logger;
  /** null: tables stay files (--no-load, or a store without Storage tables) */
  private readonly tables: ProjectTables | null;
  private readonly outputMapping: OutputMapping | null;

  constructor(private readonly options: RunOptions) {
    this.logger = options.logger.child({ componentId: options.componentId, configId: options.configId });
    this.now = options.now ?? Date.now;
    this.tables = options.load === false ? null : (options.store.tables ?? null);
    this.outputMapping = this.tables && new OutputMapping(this.tables, options.componentId, options.configId);
    this.started = this.now();
    this.folders = new RunFolders(options.dataDir);
    this.summary = {
      componentId: options.componentId,
      configId: options.configId,
      configVersion: null,
      status: 'success',
      message: '',
      rowsRun: 0,
      rowsSkipped: 0,
      rows: [],
      stateSaved: false,
      durationMs: 0,
    };
  }

  /** Runs and returns the summary; a failure is recorded in it and rethrown. */
  async run(): Promise<RunSummary> {
    try {
      await this.execute();
      return this.finish();
    } catch (error) {
      const cancelled = cancellationOf(this.options.signal);
      this.summary.status = cancelled ? 'cancelled' : 'error';
      // a stop is no error: the summary says `cancelled` and why
      if (!cancelled) this.summary.error = errorReport(error);
      this.summary.message = (cancelled ?? (error as Error)).message;
      this.finish();
      throw error;
    }
  }

  get result(): RunSummary {
    return this.summary;
  }

  private finish(): RunSummary {
    this.summary.durationMs = this.now() - this.started;
    return this.summary;
  }

  private async execute(): Promise<void> {
    const { componentId, configId } = this.options;
    const logger = this.logger;
    const configuration = await loadConfiguration(this.options.store, componentId, configId);
    this.summary.configVersion = configuration.version;
    if (configuration.isDisabled && !this.options.force) {
      throw new UserError('GEX_CONFIG_DISABLED', `Configuration ${displayId(configId)} is disabled. Enable it in the store, or run it anyway with --force.`);
    }
    const imageParameters = await componentImageParameters(this.options.store, componentId);
    const plan = planRows(configuration, this.options.rowIds);
    logger.info(
      { configVersion: configuration.version, rows: configuration.rows.length },
      `Configuration ${displayId(configId)} ${quoteForLog(configuration.name)} (${displayId(componentId)}, version ${configuration.version}): ` +
        (configuration.rows.length === 0 ? 'no rows' : `${plural(configuration.rows.length, 'row')}, ${groupThousands(plan.run.length)} to run`),
    );
    // summary rows in the configuration's order; run rows are filled in as they finish
    const skipReason = new Map(plan.skipped.map(({ row, reason }) => [row.id, reason]));
    for (const row of configuration.rows) {
      const reason = skipReason.get(row.id);
      if (reason) logger.info({ rowId: row.id, status: 'skipped', reason }, `Skipping row ${displayId(row.id)}${row.name ? ` ${quoteForLog(row.name)}` : ''}: ${reason}`);
      this.summary.rows.push(emptyRow(row, this.folders.row(row.id).relative, reason ? 'skipped' : 'not run', reason));
    }
    this.summary.rowsSkipped = plan.skipped.length;
    if (this.options.load !== false && !this.options.store.tables) {
      logger.info({ tablesLoaded: false }, 'Tables are not loaded into Storage tables: the store is a remote Storage API (gex loads only into the embedded store); they stay files in the data folder');
    }

    let units: Unit[];
    if (configuration.rows.length === 0) {
      units = [{ row: null, label: 'configuration', folder: this.folders.root(), configuration: configuration.configuration, state: configuration.state }];
    } else {
      if (plan.run.length === 0) {
        this.summary.message = 'No configurations executed.';
        logger.info(this.summary.message);
        return;
      }
      units = plan.run.map(({ row, forced }, i) => {
        if (forced) logger.info({ rowId: row.id }, `Force running disabled row ${displayId(row.id)}`);
        return {
          row,
          label: `row ${groupThousands(i + 1)} of ${groupThousands(plan.run.length)}: ${displayId(row.id)}${row.name ? ` ${displayText(row.name)}` : ''}`,
          folder: this.folders.row(row.id),
          configuration: mergeRowConfiguration(configuration.configuration, row.configuration),
          state: row.state,
        };
      });
    }

    // before the first request of the first row: every unit's secrets decrypt, and the data
    // folder takes what the run will write there (no link planted in it, no folder it cannot write)
    const prepared: PreparedUnit[] = [];
    for (const unit of units) prepared.push(await this.prepareUnit(unit, imageParameters));
    await this.folders.checkWritable(units.map((u) => u.folder));

    const produced: Array<{ unit: Unit } & UnitResult> = [];
    for (const [i, unit] of prepared.entries()) {
      try {
        this.options.signal?.throwIfAborted();
        produced.push({ unit, ...(await this.runUnit(unit, imageParameters)) });
      } catch (error) {
        for (const rest of prepared.slice(i + 1)) {
          const entry = this.summary.rows.find((r) => r.id === rest.row?.id);
          if (entry) entry.reason = cancellationOf(this.options.signal) ? 'the run was stopped' : 'an earlier row failed';
        }
        const unitLog = this.unitLogger(unit);
        if (cancellationOf(this.options.signal)) unitLog.warn({ status: 'cancelled' }, `No state is saved: the run was stopped during ${unit.label}`);
        else unitLog.error({ status: 'failed', ...errorLogFields(error) }, `No state is saved: ${unit.label} failed, so a rerun repeats the work of every row`);
        throw error;
      }
    }
    // the last moment a stop signal cancels the run: saving is all or nothing
    this.options.signal?.throwIfAborted();
    await this.saveStates(produced);
    this.summary.message = 'Component processing finished.';
  }

  /** The run's logger for one unit: its lines name the row. */
  private unitLogger(unit: Unit): Logger {
    return unit.row ? this.logger.child({ rowId: unit.row.id }) : this.logger;
  }

  /**
   * A unit's configuration split and its secrets decrypted — before any unit runs. A secret that
   * does not decrypt fails the run naming the row and the key (the summary row says so too).
   */
  private async prepareUnit(unit: Unit, imageParameters: JsonObject): Promise<PreparedUnit> {
    const stored = splitConfiguration(unit.configuration);
    const storedComponentState = componentState(unit.state);
    try {
      const input = await decryptedInput(this.options.store, this.options.componentId, stored, storedComponentState, imageParameters, this.options.masker, unit.row?.id ?? null);
      return { ...unit, stored, storedComponentState, input };
    } catch (error) {
      const entry = this.summary.rows.find((r) => r.id === (unit.row?.id ?? null));
      if (entry) entry.reason = (error as Error).message;
      throw error;
    }
  }

  private async runUnit(unit: PreparedUnit, imageParameters: JsonObject): Promise<UnitResult> {
    const logger = this.unitLogger(unit);
    const started = this.now();
    const summary = this.summary.rows.find((r) => r.id === (unit.row?.id ?? null)) ?? emptyRow(unit.row, unit.folder.relative, 'not run');
    if (!this.summary.rows.includes(summary)) this.summary.rows.push(summary);
    summary.status = 'failed';
    this.summary.rowsRun++;
    logger.info({ folder: unit.folder.relative }, `Running ${unit.label}${unit.row ? ` in folder ${unit.folder.relative}` : ''}`);

    const { stored, storedComponentState, input } = unit;
    if (stored.processors !== undefined) logger.debug('processors are not passed to the component');

    const unitName = unitNameOf(unit.row?.id ?? null);
    let inputTables: InputTable[];
    try {
      // checked before the row's folder is touched: a hostile destination never reaches the disk
      inputTables = parseInputTables(stored.storage, unitName, new Date(this.now()));
    } catch (error) {
      summary.reason = (error as Error).message;
      throw error;
    }

    // the row's folder is a data folder: config.json records what the row ran with (secrets encrypted)
    await this.folders.prepare(unit.folder);
    const data = this.folders.dataFolder(unit.folder);
    await data.writeInput(componentConfigFile(stored, imageParameters), storedComponentState);
    try {
      if (inputTables.length > 0) summary.inputTables = await this.exportInputs(inputTables, data, unit, unitName, logger);
      const result = await extract(
        input,
        { dataDir: unit.folder.dir, dataRoot: this.options.dataDir, logger, masker: this.options.masker, progressLine: this.options.progressLine, signal: this.options.signal, now: () => Math.floor(this.now() / 1000) },
      );
      const outState = result.state;
      await data.writeOutputState(redactSecrets(outState) as JsonObject);
      summary.requests = result.requests;
      summary.records = result.jobs.reduce((n, j) => n + j.records, 0);
      summary.jobs = jobRunSummaries(result.jobs);
      summary.tables = result.tables.map((t) => ({ file: path.relative(this.options.dataDir, data.tableFile(t.file)), rows: t.rows, loaded: false }));
      // Keboola's output mapping: this row's tables are in the project before the next row starts
      if (this.outputMapping) {
        const loaded = await this.outputMapping.load(data, result.tables.map((t) => t.file), logger);
        loaded.forEach((table, i) => Object.assign(summary.tables[i], { loaded: true, tableId: table.tableId }));
      }
      Object.assign(summary, {
        status: 'success',
        durationMs: this.now() - started,
        state: JSON.parse(stringifyExact(redactSecrets(outState))),
      });
      logger.info(
        { status: 'success', records: summary.records, requests: summary.requests, tables: summary.tables.length, durationMs: summary.durationMs },
        `Finished ${unit.label}: ${plural(summary.records, 'record')}, ${plural(summary.tables.length, 'table')} in ${formatSeconds(summary.durationMs)}`,
      );
      return { state: outState, tables: result.tables.map((t) => t.file) };
    } catch (error) {
      summary.durationMs = this.now() - started;
      const cancelled = cancellationOf(this.options.signal);
      summary.reason = (cancelled ?? (error as Error)).message;
      if (cancelled) summary.status = 'cancelled';
      if (cancelled) logger.warn({ status: 'cancelled', durationMs: summary.durationMs }, `Stopped ${unit.label}: ${cancelled.message}`);
      else logger.error({ status: 'failed', durationMs: summary.durationMs, ...errorLogFields(error) }, `Failed ${unit.label}`);
      throw error;
    }
  }

  /** Keboola's input mapping: the row's input tables into its in/tables, read after the previous row's outputs were loaded. */
  private async exportInputs(inputs: InputTable[], data: DataFolder, unit: Unit, unitName: string, logger: Logger): Promise<InputTableSummary[] | undefined> {
    if (!this.tables) {
      logger.warn(
        { inputTables: inputs.length },
        `${unitName} lists ${plural(inputs.length, 'input table')} (storage.input.tables) that ${this.options.load === false ? 'are not exported with --no-load' : 'a remote store cannot export'}: in/tables stays empty`,
      );
      return undefined;
    }
    await data.guard.mkdir(data.inputTablesDir);
    const exported = await exportInputTables(this.tables, inputs, data, unitName);
    for (const table of exported) {
      logger.info({ tableId: table.source, file: table.file, rows: table.rows }, `Exported table ${displayId(table.source)} to ${displayText(table.file)}: ${plural(table.rows, 'row')}`);
    }
    return exported.map((t) => ({ ...t, file: path.posix.join(unit.folder.relative, t.file) }));
  }

  /**
   * Every unit succeeded and its tables are still on disk: store every state (each row's, or the
   * root state when there are no rows) in one store call — all or nothing on the embedded store;
   * on a remote one, a failure puts back what was saved before it, and the summary says how that went.
   */
  private async saveStates(produced: Array<{ unit: Unit } & UnitResult>): Promise<void> {
    const { store, componentId, configId } = this.options;
    const logger = this.logger;
    for (const { unit, tables } of produced) await this.folders.confirmTables(unit.folder, tables);
    const writes: StateWrite[] = produced.map(({ unit, state }) => ({ rowId: unit.row?.id ?? null, state: storedState(unit.state, state) }));
    try {
      await store.store.saveStates(componentId, configId, writes);
    } catch (error) {
      if (!(error instanceof StateSaveFailed)) {
        logger.error(errorLogFields(error), `No state is saved: ${(error as Error).message}`);
        throw error;
      }
      this.recordRollback(error);
      throw error.failure;
    }
    for (const { rowId } of writes) this.markStateSaved(rowId);
    logger.info(writes.length === 1 && writes[0].rowId === null ? 'Saved the state of the configuration' : `Saved the state of ${plural(writes.length, 'row')}: ${writes.map((w) => displayId(w.rowId ?? '')).join(', ')}`);
    this.summary.stateSaved = writes.length > 0;
  }

  private recordRollback(error: StateSaveFailed): void {
    const complete = error.notRestored.length === 0;
    this.summary.stateRollback = {
      status: complete ? 'complete' : 'incomplete',
      failedRowId: error.failed,
      restoredRowIds: error.restored,
      notRestored: error.notRestored.map((n) => ({ rowId: n.owner, reason: n.reason })),
    };
    for (const { owner } of error.notRestored) this.markStateSaved(owner);
    if (complete) this.logger.error(errorLogFields(error), `No state is saved: ${error.message}`);
    else this.logger.error(errorLogFields(error), `State saved only in part: ${error.message}`);
  }

  private rowSummary(owner: StateOwner): RowSummary | undefined {
    return this.summary.rows.find((r) => r.id === owner);
  }

  private markStateSaved(owner: StateOwner): void {
    const entry = this.rowSummary(owner);
    if (entry) entry.stateSaved = true;
  }
}

function emptyRow(row: Row | null, folder: string, status: RowSummary['status'], reason?: string): RowSummary {
  return { id: row?.id ?? null, name: row?.name ?? '', folder, status, reason, requests: 0, records: 0, tables: [], jobs: [], durationMs: 0, stateSaved: false };
}
