import path from 'node:path';
import { cancellationOf } from '../common/cancellation.js';
import { errorLogFields } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { displayId, displayText } from '../common/log-text.js';
import type { ProgressLine } from '../common/progress-line.js';
import type { SecretMasker } from '../common/secret-masker.js';
import { formatSeconds, plural } from '../common/text.js';
import type { DataFolder } from '../extractor/data-folder.js';
import { extract } from '../extractor/extractor.js';
import type { ReachedHosts } from '../extractor/http/reached-hosts.js';
import { PreviousTables } from '../extractor/previous-tables.js';
import { stringifyExact, type JsonObject } from '../json/index.js';
import {
  exportInputTables,
  parseInputTables,
  unitName as unitNameOf,
  type InputTable,
  type InputTableReader,
} from './input-mapping.js';
import type { OutputMapping } from './output-mapping.js';
import { parseOutputMapping, type OutputMappingEntry } from './output-mapping-config.js';
import type { PlannedUnit } from './run-plan.js';
import type { RunFolder, RunFolders } from './run-folders.js';
import { jobRunSummaries, type InputTableSummary, type RowSummary } from './run-summary.js';
import { redactSecrets, stateAsInFolder } from './stored-state.js';

/**
 * Running one unit of a plan (docs/design.md#one-run-pipeline), the same for a row of a stored
 * configuration and for a data folder: its folder made ready, the tables of an earlier run
 * removed, its input tables exported, the extraction, `out/state.json`, its tables loaded. What
 * differs between the two is said by the unit (`folderInput`) and by the named options of UnitRunMode.
 */

/** Keboola's input and output mapping of a stored configuration's units. */
export interface StorageMapping {
  /** where input tables are read; null: in/tables stays empty (--no-load, or a store without Storage tables) */
  inputTables: InputTableReader | null;
  /** null: output tables stay files */
  outputMapping: OutputMapping | null;
  /** why input tables are not exported when `inputTables` is null ("are not exported with --no-load") */
  notExported: string;
}

export interface UnitRunMode {
  /** null: the unit's `storage` is not read (a data folder: its config.json is GE's input only) */
  storage: StorageMapping | null;
  /**
   * the unit's log lines: `unit` — "Running …", "Finished …" or "Failed …" (the units of a stored
   * configuration); `extraction` — one "Extraction finished" line (a data folder, as GE's run is one)
   */
  report: 'unit' | 'extraction';
  /** the data folder is removed when the run ends (a queue job's): lines name no folder in it */
  temporaryFolders?: boolean;
}

export interface UnitRunContext {
  /** the data folder of the run (a row's folder is inside it) */
  dataDir: string;
  folders: RunFolders;
  /** the unit's logger (its lines name the row) */
  logger: Logger;
  masker: SecretMasker;
  progressLine?: ProgressLine;
  signal?: AbortSignal;
  /** the clock in milliseconds */
  now: () => number;
  mode: UnitRunMode;
  /** the hosts that answered in this run, shared by its units */
  reachedHosts: ReachedHosts;
}

/** What a unit's run produced: its component state and the tables (files in out/tables) it wrote. */
export interface UnitResult {
  state: JsonObject;
  tables: string[];
}

/** Runs `unit` in `folder`, filling its row of the summary; a failure is recorded there and rethrown. */
export async function runUnit(
  unit: PlannedUnit,
  folder: RunFolder,
  summary: RowSummary,
  context: UnitRunContext,
): Promise<UnitResult> {
  const { logger, mode } = context;
  const started = context.now();
  summary.status = 'failed';
  if (mode.report === 'unit') {
    const where = unit.row && !mode.temporaryFolders ? ` in folder ${folder.relative}` : '';
    logger.info({ folder: folder.relative }, `Running ${unit.label}${where}`);
  }
  if (unit.hasProcessors) logger.debug('processors are not passed to the component');

  const unitName = unitNameOf(unit.row?.id ?? null);
  let inputTables: InputTable[] = [];
  let outputTables: OutputMappingEntry[] = [];
  try {
    // checked before the unit's folder is touched: a hostile destination never reaches the disk
    if (mode.storage) {
      inputTables = parseInputTables(unit.storage, unitName, new Date(context.now()));
      outputTables = parseOutputMapping(unit.storage, unitName);
    }
  } catch (error) {
    summary.reason = (error as Error).message;
    throw error;
  }

  const data = context.folders.dataFolder(folder);
  let previous: PreviousTables | null = null;
  if (unit.folderInput) {
    // gex's folder: emptied, and config.json records what the unit ran with (secrets encrypted)
    await context.folders.prepare(folder);
    await data.writeInput(unit.folderInput.config, unit.folderInput.state);
  } else {
    // the user's folder: only the tables gex's previous run wrote there go
    previous = new PreviousTables(data, logger);
    await previous.remove();
  }
  try {
    if (inputTables.length > 0 && mode.storage) {
      summary.inputTables = await exportInputs(inputTables, data, folder, unitName, mode.storage, logger);
    }
    const result = await extract(unit.input, {
      dataDir: folder.dir,
      dataRoot: context.dataDir,
      logger,
      masker: context.masker,
      progressLine: context.progressLine,
      signal: context.signal,
      now: () => Math.floor(context.now() / 1000),
      reachedHosts: context.reachedHosts,
    });
    const tableFiles = result.tables.map((t) => t.file);
    await previous?.record(tableFiles);
    // as GE writes it for this folder's in/state.json: a secret decrypted for the run goes back as stored
    await data.writeOutputState(
      unit.folderInput ? stateAsInFolder(result.state, unit.input.state, unit.folderInput.state) : result.state,
    );
    summary.requests = result.requests;
    summary.records = result.jobs.reduce((n, j) => n + j.records, 0);
    summary.jobs = jobRunSummaries(result.jobs);
    summary.tables = result.tables.map((t) => ({
      file: path.relative(context.dataDir, data.tableFile(t.file)),
      rows: t.rows,
      bytes: t.bytes,
      loaded: false,
    }));
    // Keboola's output mapping: this row's tables are in the project before the next row starts
    if (mode.storage?.outputMapping) {
      const loaded = await mode.storage.outputMapping.load(data, tableFiles, logger, {
        entries: outputTables,
        unit: unitName,
        rowId: unit.row?.id ?? null,
      });
      loaded.forEach((table, i) => Object.assign(summary.tables[i], { loaded: true, tableId: table.tableId }));
    }
    Object.assign(summary, {
      status: 'success',
      durationMs: context.now() - started,
      state: JSON.parse(stringifyExact(redactSecrets(result.state))),
    });
    if (mode.report === 'unit') {
      logger.info(
        {
          status: 'success',
          records: summary.records,
          requests: summary.requests,
          tables: summary.tables.length,
          durationMs: summary.durationMs,
        },
        `Finished ${unit.label}: ${plural(summary.records, 'record')}, ${plural(summary.tables.length, 'table')} in ${formatSeconds(summary.durationMs)}`,
      );
    } else {
      logger.info(
        {
          tables: result.tables.length,
          records: summary.records,
          requests: result.requests,
          durationMs: result.durationMs,
        },
        `Extraction finished: ${plural(result.tables.length, 'table')}, ${plural(summary.records, 'record')}, ` +
          `${plural(result.requests, 'request')} in ${formatSeconds(result.durationMs)}. Tables are in ${displayText(context.dataDir)}/out/tables`,
      );
    }
    return { state: result.state, tables: tableFiles };
  } catch (error) {
    summary.durationMs = context.now() - started;
    const cancelled = cancellationOf(context.signal);
    summary.reason = (cancelled ?? (error as Error)).message;
    if (cancelled) summary.status = 'cancelled';
    if (mode.report === 'unit') {
      if (cancelled)
        logger.warn(
          { status: 'cancelled', durationMs: summary.durationMs },
          `Stopped ${unit.label}: ${cancelled.message}`,
        );
      else
        logger.error(
          { status: 'failed', durationMs: summary.durationMs, ...errorLogFields(error) },
          `Failed ${unit.label}`,
        );
    }
    throw error;
  }
}

/** Keboola's input mapping: the row's input tables into its in/tables, read after the previous row's outputs were loaded. */
async function exportInputs(
  inputs: InputTable[],
  data: DataFolder,
  folder: RunFolder,
  unitName: string,
  storage: StorageMapping,
  logger: Logger,
): Promise<InputTableSummary[] | undefined> {
  if (!storage.inputTables) {
    logger.warn(
      { inputTables: inputs.length },
      `${unitName} lists ${plural(inputs.length, 'input table')} (storage.input.tables) that ${storage.notExported}: in/tables stays empty`,
    );
    return undefined;
  }
  await data.guard.mkdir(data.inputTablesDir);
  const exported = await exportInputTables(storage.inputTables, inputs, data, unitName);
  for (const table of exported) {
    logger.info(
      { tableId: table.source, file: table.file, rows: table.rows },
      `Exported table ${displayId(table.source)} to ${displayText(table.file)}: ${plural(table.rows, 'row')}`,
    );
  }
  return exported.map((t) => ({ ...t, file: path.posix.join(folder.relative, t.file) }));
}
