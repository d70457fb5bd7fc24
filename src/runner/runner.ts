import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cancellationOf } from '../common/cancellation.js';
import { errorKind, UserError, type ErrorKind } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { plural } from '../common/text.js';
import type { ProgressLine } from '../common/progress-line.js';
import type { SecretMasker } from '../common/secret-masker.js';
import { extract } from '../extractor/extractor.js';
import { decodeJson, isJsonObject, phpJsonEncode, stringifyExact, type JsonObject, type JsonValue } from '../php-compat/index.js';
import type { OpenedStore } from '../store/open-config-store.js';
import { StoreError } from '../store/store-error.js';
import type { Configuration, Row } from '../store/types.js';
import { componentConfigFile, mergeRowConfiguration, splitConfiguration } from './effective-configuration.js';
import { planRows } from './row-plan.js';
import { componentState, redactSecrets, storedState } from './stored-state.js';

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
}

export interface TableSummary {
  file: string;
  rows: number;
}

export interface RowSummary {
  /** null for a configuration without rows */
  id: string | null;
  name: string;
  status: 'success' | 'failed' | 'cancelled' | 'skipped' | 'not run';
  reason?: string;
  requests: number;
  records: number;
  tables: TableSummary[];
  durationMs: number;
  /** the component state the run produced (saved only when every row succeeded) */
  state?: unknown;
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
  stateSaved: boolean;
  durationMs: number;
  error?: { kind: ErrorKind; message: string };
}

interface Unit {
  row: Row | null;
  label: string;
  dir: string;
  configuration: JsonValue;
  state: JsonValue;
}

/**
 * Runs a stored configuration as Keboola's runner does (runner.md): rows one after another in the
 * configuration's order, each in its own folder with the root configuration merged under it;
 * state is saved back through the store only when every row succeeded.
 */
export class ConfigurationRunner {
  private readonly summary: RunSummary;
  private readonly started = Date.now();

  constructor(private readonly options: RunOptions) {
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
      if (!cancelled) this.summary.error = { kind: errorKind(error), message: (error as Error).message };
      this.summary.message = (cancelled ?? (error as Error)).message;
      this.finish();
      throw error;
    }
  }

  get result(): RunSummary {
    return this.summary;
  }

  private finish(): RunSummary {
    this.summary.durationMs = Date.now() - this.started;
    return this.summary;
  }

  private async loadConfiguration(): Promise<Configuration> {
    const { store, componentId, configId } = this.options;
    try {
      return await store.store.getConfiguration(componentId, configId);
    } catch (error) {
      if (error instanceof StoreError && error.status === 404) {
        throw new UserError(`Configuration ${configId} of component ${componentId} not found in ${store.location}: ${error.message}`);
      }
      throw error;
    }
  }

  private async execute(): Promise<void> {
    const { logger, componentId, configId, dataDir } = this.options;
    const configuration = await this.loadConfiguration();
    this.summary.configVersion = configuration.version;
    if (configuration.isDisabled && !this.options.force) {
      throw new UserError(`Configuration ${configId} is disabled. Enable it in the store, or run it anyway with --force.`);
    }
    const imageParameters = await this.imageParameters();
    const plan = planRows(configuration, this.options.rowIds);
    logger.info(
      `Configuration ${configId} "${configuration.name}" (${componentId}, version ${configuration.version}): ` +
        (configuration.rows.length === 0 ? 'no rows' : `${configuration.rows.length} rows, ${plan.run.length} to run`),
    );
    // summary rows in the configuration's order; run rows are filled in as they finish
    const skipReason = new Map(plan.skipped.map(({ row, reason }) => [row.id, reason]));
    for (const row of configuration.rows) {
      const reason = skipReason.get(row.id);
      if (reason) logger.info(`Skipping row ${row.id}${row.name ? ` "${row.name}"` : ''}: ${reason}`);
      this.summary.rows.push(emptyRow(row, reason ? 'skipped' : 'not run', reason));
    }
    this.summary.rowsSkipped = plan.skipped.length;

    let units: Unit[];
    if (configuration.rows.length === 0) {
      units = [{ row: null, label: 'configuration', dir: dataDir, configuration: configuration.configuration, state: configuration.state }];
    } else {
      if (plan.run.length === 0) {
        this.summary.message = 'No configurations executed.';
        logger.info(this.summary.message);
        return;
      }
      units = plan.run.map(({ row, forced }, i) => {
        if (forced) logger.info(`Force running disabled row ${row.id}`);
        return {
          row,
          label: `row ${i + 1} of ${plan.run.length}: ${row.id}${row.name ? ` ${row.name}` : ''}`,
          dir: path.join(dataDir, 'rows', row.id),
          configuration: mergeRowConfiguration(configuration.configuration, row.configuration),
          state: row.state,
        };
      });
    }

    const produced: Array<{ unit: Unit; state: JsonValue }> = [];
    for (const [i, unit] of units.entries()) {
      try {
        this.options.signal?.throwIfAborted();
        produced.push({ unit, state: await this.runUnit(unit, imageParameters) });
      } catch (error) {
        for (const rest of units.slice(i + 1)) {
          const entry = this.summary.rows.find((r) => r.id === rest.row?.id);
          if (entry) entry.reason = cancellationOf(this.options.signal) ? 'the run was stopped' : 'an earlier row failed';
        }
        if (cancellationOf(this.options.signal)) logger.warn(`No state is saved: the run was stopped during ${unit.label}`);
        else logger.error(`No state is saved: ${unit.label} failed, so a rerun repeats the work of every row`);
        throw error;
      }
    }
    // the last moment a stop signal cancels the run: saving is all or nothing
    this.options.signal?.throwIfAborted();
    await this.saveStates(configuration, produced);
    this.summary.message = 'Component processing finished.';
  }

  /** Image parameters come from the component registry, at run time, never from the configuration. */
  private async imageParameters(): Promise<JsonObject> {
    try {
      const component = await this.options.store.store.getComponent(this.options.componentId);
      const data = isJsonObject(component.definition) ? component.definition.get('data') : undefined;
      const params = isJsonObject(data) ? data.get('image_parameters') : undefined;
      return isJsonObject(params) ? params : new Map();
    } catch {
      return new Map();
    }
  }

  private async runUnit(unit: Unit, imageParameters: JsonObject): Promise<JsonValue> {
    const { logger, store, componentId } = this.options;
    const started = Date.now();
    const summary = this.summary.rows.find((r) => r.id === (unit.row?.id ?? null)) ?? emptyRow(unit.row, 'not run');
    if (!this.summary.rows.includes(summary)) this.summary.rows.push(summary);
    summary.status = 'failed';
    this.summary.rowsRun++;
    logger.info(`Running ${unit.label}`);

    const stored = splitConfiguration(unit.configuration);
    if (stored.processors !== undefined) logger.debug('processors are not passed to the component');
    const storedComponentState = componentState(unit.state);
    // secrets are decrypted in memory only; what goes to disk keeps the stored (encrypted) form
    const parameters = (await store.decryptSecrets(componentId, stored.parameters)) as JsonObject;
    const authorization = (await store.decryptSecrets(componentId, stored.authorization)) as JsonObject;
    const state = (await store.decryptSecrets(componentId, storedComponentState)) as JsonObject;
    for (const value of [parameters, authorization, state, imageParameters]) this.options.masker.addFromConfig(value);

    await this.prepareFolder(unit, componentConfigFile(stored, imageParameters), storedComponentState);
    try {
      const result = await extract(
        { parameters, action: 'run', imageParameters, authorization, state },
        { dataDir: unit.dir, logger, masker: this.options.masker, progressLine: this.options.progressLine, signal: this.options.signal },
      );
      const outState = decodeJson(result.stateText);
      await writeFile(path.join(unit.dir, 'out', 'state.json'), phpJsonEncode(redactSecrets(outState), { objectsAreArrays: true }));
      Object.assign(summary, {
        status: 'success',
        requests: result.requests,
        records: result.jobs.reduce((n, j) => n + j.records, 0),
        tables: result.tables.map((t) => ({ file: path.relative(this.options.dataDir, path.join(unit.dir, 'out', 'tables', t.file)), rows: t.rows })),
        durationMs: Date.now() - started,
        state: JSON.parse(stringifyExact(redactSecrets(outState))),
      });
      logger.info(`Finished ${unit.label}: ${plural(summary.records, 'record')}, ${plural(summary.tables.length, 'table')} in ${(summary.durationMs / 1000).toFixed(1)} s`);
      return outState;
    } catch (error) {
      summary.durationMs = Date.now() - started;
      const cancelled = cancellationOf(this.options.signal);
      summary.reason = (cancelled ?? (error as Error)).message;
      if (cancelled) summary.status = 'cancelled';
      if (cancelled) logger.warn(`Stopped ${unit.label}: ${cancelled.message}`);
      else logger.error(`Failed ${unit.label}`);
      throw error;
    }
  }

  /** A clean folder per run: config.json (secrets encrypted), in/state.json, empty out/. */
  private async prepareFolder(unit: Unit, configFile: JsonObject, storedComponentState: JsonObject): Promise<void> {
    if (unit.row) await rm(unit.dir, { recursive: true, force: true });
    else await rm(path.join(unit.dir, 'out'), { recursive: true, force: true });
    await mkdir(path.join(unit.dir, 'in'), { recursive: true });
    await mkdir(path.join(unit.dir, 'out', 'tables'), { recursive: true });
    await writeFile(path.join(unit.dir, 'config.json'), stringifyExact(configFile));
    await writeFile(path.join(unit.dir, 'in', 'state.json'), stringifyExact(storedComponentState));
  }

  /** Every unit succeeded: store each row's state (the root state when there are no rows). */
  private async saveStates(configuration: Configuration, produced: Array<{ unit: Unit; state: JsonValue }>): Promise<void> {
    const { store, componentId, configId, logger } = this.options;
    for (const { unit, state } of produced) {
      const next = storedState(unit.state, state);
      if (unit.row) await store.store.updateRowState(componentId, configId, unit.row.id, next);
      else await store.store.updateConfigurationState(componentId, configId, next);
      logger.info(`Saved state of ${unit.row ? `row ${unit.row.id}` : `configuration ${configuration.id}`}`);
    }
    this.summary.stateSaved = produced.length > 0;
  }
}

function emptyRow(row: Row | null, status: RowSummary['status'], reason?: string): RowSummary {
  return { id: row?.id ?? null, name: row?.name ?? '', status, reason, requests: 0, records: 0, tables: [], durationMs: 0 };
}
