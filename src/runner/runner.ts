import { cancellationOf } from '../common/cancellation.js';
import { errorLogFields } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { displayId, quoteForLog } from '../common/log-text.js';
import { groupThousands, plural } from '../common/text.js';
import type { ProgressLine } from '../common/progress-line.js';
import type { SecretMasker } from '../common/secret-masker.js';
import type { OpenedStore } from '../store/open-config-store.js';
import type { StateWrite } from '../store/config-store.js';
import { StateSaveFailed, type StateOwner } from '../store/state-save-failed.js';
import { embeddedInputTables, remoteInputTables } from './input-mapping.js';
import { OutputMapping } from './output-mapping.js';
import { planRun, type PlanObserver, type PlannedUnit, type RunSource } from './run-plan.js';
import { RunFolders, type RunFolder } from './run-folders.js';
import {
  recordFailure,
  rowSummary,
  RUN_FINISHED,
  startedRunSummary,
  type RowSummary,
  type RunSummary,
} from './run-summary.js';
import { storedState } from './stored-state.js';
import { ReachedHosts } from '../extractor/http/reached-hosts.js';
import { runUnit, type StorageMapping, type UnitResult, type UnitRunMode } from './unit-run.js';

export type { RunSummary } from './run-summary.js';

/** What a run runs: a configuration of a store, or the data folder itself (its config.json). */
export type RunTarget =
  | {
      kind: 'stored';
      store: OpenedStore;
      componentId: string;
      configId: string;
      /** run only these rows (disabled ones too) */
      rowIds: string[];
      /** run a disabled configuration */
      force?: boolean;
      /**
       * Storage table mapping (default true): each row's input tables exported into its in/tables
       * before it runs, its out/tables loaded into the project's tables after it succeeds: the
       * embedded store's, or a gex server's through its API. false, or a Keboola stack, keeps files only.
       */
      load?: boolean;
    }
  | {
      kind: 'folder';
      /** the component the summary names */
      componentId: string;
    };

type StoredTarget = Extract<RunTarget, { kind: 'stored' }>;

export interface RunOptions {
  target: RunTarget;
  dataDir: string;
  logger: Logger;
  masker: SecretMasker;
  progressLine?: ProgressLine;
  /** stops the run (a stop signal): the current unit is abandoned, no state is saved */
  signal?: AbortSignal;
  /** the clock in milliseconds (durations, and each row's run start in its state); tests pin it */
  now?: () => number;
  /** the data folder is removed when the run ends (a queue job's): the log names no folder in it */
  temporaryDataDir?: boolean;
}

/**
 * Runs a plan (docs/design.md#one-run-pipeline): planning (run-plan.ts), then each unit one after
 * another (unit-run.ts), then — for a stored configuration, as Keboola's runner does — every
 * state saved back through the store only when every unit succeeded. A stored configuration's
 * rows run each in its own folder with the root configuration merged under it; a data folder is
 * one unit run in the folder itself.
 */
export class Runner {
  private readonly summary: RunSummary;
  private readonly now: () => number;
  private readonly started: number;
  private readonly folders: RunFolders;
  /** every line of a stored configuration's run names its configuration (JSON log lines: as fields) */
  private readonly logger: Logger;
  private mode: UnitRunMode;
  /** said once at the start of a stored configuration's run: how its tables reach the project */
  private storageNote: StorageDecision['note'] = null;
  /** the API hosts that answered in this run: a later row's refused connection to one gets GE's whole retry schedule */
  private readonly reachedHosts = new ReachedHosts();

  constructor(private readonly options: RunOptions) {
    const { target } = options;
    this.logger =
      target.kind === 'stored'
        ? options.logger.child({ componentId: target.componentId, configId: target.configId })
        : options.logger;
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.folders = new RunFolders(options.dataDir);
    // a stored configuration's mapping is decided when the run starts (a remote store is asked)
    this.mode = {
      storage: null,
      report: target.kind === 'stored' ? 'unit' : 'extraction',
      temporaryFolders: options.temporaryDataDir === true,
    };
    this.summary = startedRunSummary(target.componentId, target.kind === 'stored' ? target.configId : '');
  }

  /** Runs and returns the summary; a failure is recorded in it and rethrown. */
  async run(): Promise<RunSummary> {
    try {
      await this.execute();
      return this.finish();
    } catch (error) {
      recordFailure(this.summary, error, cancellationOf(this.options.signal));
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
    const { target, dataDir, masker } = this.options;
    const source: RunSource = target.kind === 'stored' ? { ...target, kind: 'stored' } : { kind: 'folder', dataDir };
    const force = target.kind === 'stored' && target.force;
    if (target.kind === 'stored') {
      const decision = await storageMapping(target);
      this.mode = { ...this.mode, storage: decision.storage };
      this.storageNote = decision.note;
    }
    const plan = await planRun(source, { masker, select: 'run', force, observer: this.observer() });
    if (plan.configuration && plan.configuration.rows.length > 0 && plan.units.length === 0) {
      this.summary.message = 'No configurations executed.';
      this.logger.info(this.summary.message);
      return;
    }
    const folders = plan.units.map((unit) => (unit.row ? this.folders.row(unit.row.id) : this.folders.root()));
    // before the first request of the first unit: the data folder takes what the run will write
    // there (no link planted in it, no folder it cannot write)
    await this.folders.checkWritable(folders, { input: target.kind === 'stored' });

    const produced: Array<{ unit: PlannedUnit; folder: RunFolder } & UnitResult> = [];
    for (const [i, unit] of plan.units.entries()) {
      const folder = folders[i];
      try {
        this.options.signal?.throwIfAborted();
        const summary = this.summaryRow(unit, folder);
        this.summary.rowsRun++;
        const logger = this.unitLogger(unit);
        const context = {
          ...this.options,
          folders: this.folders,
          logger,
          now: this.now,
          mode: this.mode,
          reachedHosts: this.reachedHosts,
        };
        produced.push({ unit, folder, ...(await runUnit(unit, folder, summary, context)) });
      } catch (error) {
        if (target.kind === 'stored') this.noStateSaved(plan.units, i, error);
        throw error;
      }
    }
    if (target.kind === 'stored') {
      // the last moment a stop signal cancels the run: saving is all or nothing
      this.options.signal?.throwIfAborted();
      await this.saveStates(produced);
    }
    this.summary.message = RUN_FINISHED;
  }

  /** What planning a stored configuration tells the summary and the log, as it happens. */
  private observer(): PlanObserver {
    const logger = this.logger;
    return {
      loaded: (configuration) => {
        this.summary.configVersion = configuration.version;
      },
      selected: ({ configuration, rows: plan }) => {
        const { componentId, configId } = this.options.target as StoredTarget;
        logger.info(
          { configVersion: configuration.version, rows: configuration.rows.length },
          `Configuration ${displayId(configId)} ${quoteForLog(configuration.name)} (${displayId(componentId)}, version ${configuration.version}): ` +
            (configuration.rows.length === 0
              ? 'no rows'
              : `${plural(configuration.rows.length, 'row')}, ${groupThousands(plan.run.length)} to run`),
        );
        // summary rows in the configuration's order; run rows are filled in as they finish
        const skipReason = new Map(plan.skipped.map(({ row, reason }) => [row.id, reason]));
        for (const row of configuration.rows) {
          const reason = skipReason.get(row.id);
          if (reason)
            logger.info(
              { rowId: row.id, status: 'skipped', reason },
              `Skipping row ${displayId(row.id)}${row.name ? ` ${quoteForLog(row.name)}` : ''}: ${reason}`,
            );
          this.summary.rows.push(
            rowSummary(row, this.folders.row(row.id).relative, reason ? 'skipped' : 'not run', reason),
          );
        }
        this.summary.rowsSkipped = plan.skipped.length;
        const note = this.storageNote;
        if (note) logger[note.level]({ tablesLoaded: note.loaded }, note.text);
        if (configuration.rows.length === 0) return;
        for (const { row, forced } of plan.run)
          if (forced) logger.info({ rowId: row.id }, `Force running disabled row ${displayId(row.id)}`);
      },
      // a secret that does not decrypt fails the run naming the row and the key: its summary row says so too
      unitFailed: (rowId, error) => {
        const entry = this.rowEntry(rowId);
        if (entry) entry.reason = (error as Error).message;
      },
    };
  }

  /** The unit's row of the summary (made now for a configuration without rows, or a data folder). */
  private summaryRow(unit: PlannedUnit, folder: RunFolder): RowSummary {
    const existing = this.rowEntry(unit.row?.id ?? null);
    if (existing) return existing;
    const made = rowSummary(unit.row, folder.relative, 'not run');
    this.summary.rows.push(made);
    return made;
  }

  /** A unit failed or the run was stopped during it: later units do not run and no state is saved. */
  private noStateSaved(units: PlannedUnit[], failed: number, error: unknown): void {
    const cancelled = cancellationOf(this.options.signal);
    for (const rest of units.slice(failed + 1)) {
      const entry = this.rowEntry(rest.row?.id ?? null);
      if (entry) entry.reason = cancelled ? 'the run was stopped' : 'an earlier row failed';
    }
    const unit = units[failed];
    const unitLog = this.unitLogger(unit);
    if (cancelled) unitLog.warn({ status: 'cancelled' }, `No state is saved: the run was stopped during ${unit.label}`);
    else
      unitLog.error(
        { status: 'failed', ...errorLogFields(error) },
        `No state is saved: ${unit.label} failed, so a rerun repeats the work of every row`,
      );
  }

  /** The run's logger for one unit: its lines name the row. */
  private unitLogger(unit: PlannedUnit): Logger {
    return unit.row ? this.logger.child({ rowId: unit.row.id }) : this.logger;
  }

  /**
   * Every unit succeeded and its tables are still on disk: store every state (each row's, or the
   * root state when there are no rows) in one store call — all or nothing on the embedded store;
   * on a remote one, a failure puts back what was saved before it, and the summary says how that went.
   */
  private async saveStates(produced: Array<{ unit: PlannedUnit; folder: RunFolder } & UnitResult>): Promise<void> {
    const { store, componentId, configId } = this.options.target as StoredTarget;
    const logger = this.logger;
    for (const { folder, tables } of produced) await this.folders.confirmTables(folder, tables);
    const writes: StateWrite[] = produced.map(({ unit, state }) => ({
      rowId: unit.row?.id ?? null,
      state: storedState(unit.storedState, state),
    }));
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
    logger.info(
      writes.length === 1 && writes[0].rowId === null
        ? 'Saved the state of the configuration'
        : `Saved the state of ${plural(writes.length, 'row')}: ${writes.map((w) => displayId(w.rowId ?? '')).join(', ')}`,
    );
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

  private rowEntry(owner: StateOwner): RowSummary | undefined {
    return this.summary.rows.find((r) => r.id === owner);
  }

  private markStateSaved(owner: StateOwner): void {
    const entry = this.rowEntry(owner);
    if (entry) entry.stateSaved = true;
  }
}

/** How a stored configuration's tables reach the project, and what the run says about it once at its start. */
interface StorageDecision {
  storage: StorageMapping;
  note: { level: 'info' | 'warn'; text: string; loaded: boolean } | null;
}

/**
 * The mapping of a stored configuration's units: the embedded store's Storage tables; a gex
 * server's through its API (files and storage jobs); none with --no-load or against a Keboola
 * stack, whose files live in a cloud bucket gex does not write to (tokens/verify's
 * `owner.fileStorageProvider` is not "gex").
 */
async function storageMapping(target: StoredTarget): Promise<StorageDecision> {
  const { store, componentId, configId } = target;
  if (target.load === false)
    return {
      storage: { inputTables: null, outputMapping: null, notExported: 'are not exported with --no-load' },
      note: null,
    };
  if (store.kind !== 'remote')
    return {
      storage: {
        inputTables: embeddedInputTables(store.tables),
        outputMapping: new OutputMapping(store.tables, componentId, configId),
        notExported: '',
      },
      note: null,
    };
  const provider = await store.tableTransfer.fileStorageProvider();
  if (provider !== 'gex') {
    return {
      storage: {
        inputTables: null,
        outputMapping: null,
        notExported: 'a Keboola stack cannot export to gex (its files live in its cloud storage)',
      },
      note: {
        level: 'warn',
        loaded: false,
        text:
          `Tables are not loaded into Storage tables: the Storage API at ${store.location} keeps its files in ` +
          `${provider ? `cloud storage (${quoteForLog(provider)})` : 'storage it does not name'}, which gex does not write to ` +
          '(only a gex server takes uploads); they stay files in the data folder',
      },
    };
  }
  return {
    storage: {
      inputTables: remoteInputTables(store.remoteTables, store.tableTransfer),
      outputMapping: new OutputMapping(store.tableTransfer, componentId, configId),
      notExported: '',
    },
    note: {
      level: 'info',
      loaded: true,
      text: `Tables are loaded into the project through the Storage API at ${store.location} (a file upload and an import job per table)`,
    },
  };
}
