import { UserError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { displayId, displayText } from '../common/log-text.js';
import { groupThousands, plural } from '../common/text.js';
import type { DataFolder } from '../extractor/data-folder.js';
import type { TableLoadTarget } from '../store/table-load-target.js';
import { readCsvHeader } from '../store/tables/csv-source.js';
import { parseLoadManifest, readManifest } from '../store/tables/manifest.js';
import type { LoadOrigin } from '../store/tables/index.js';
import { defaultBucketId, defaultDestination } from './default-bucket.js';
import {
  checkHeader,
  checkSources,
  effectiveLoad,
  type DestinationReason,
  type OutputMappingEntry,
} from './output-mapping-config.js';

/** One table file of a unit, loaded into the project. */
export interface LoadedTable {
  /** the file's name in out/tables */
  file: string;
  tableId: string;
  rows: number;
  incremental: boolean;
  primaryKey: string[];
  /** why the table is where it is */
  reason: DestinationReason;
}

/**
 * Keboola's output mapping for one run: after a unit succeeds, each table file it wrote to
 * `out/tables` is loaded with its manifest into the project's Storage tables (the embedded store's,
 * or a gex server's through its API), one transaction or import job per table, before the next unit starts. The configuration's `storage.output.tables` entry of a file
 * overrides its manifest key by key (output-mapping-config.ts); a file whose mapping and manifest
 * name no destination goes to the configuration's default bucket.
 */
export class OutputMapping {
  constructor(
    private readonly tables: TableLoadTarget,
    private readonly componentId: string,
    private readonly configId: string,
  ) {}

  /**
   * Loads `files` (names in the folder's out/tables) in order with the unit's output mapping
   * `entries`; the first failure stops and is thrown. A mapping naming no file fails before any load.
   */
  async load(
    folder: DataFolder,
    files: readonly string[],
    logger: Logger,
    mapping: { entries: readonly OutputMappingEntry[]; unit: string; rowId?: string | null } = {
      entries: [],
      unit: 'The configuration',
    },
  ): Promise<LoadedTable[]> {
    checkSources(mapping.entries, files, mapping.unit);
    const bySource = new Map(mapping.entries.map((e) => [e.source, e]));
    // Keboola records who loaded a table in its system metadata
    const origin: LoadOrigin = {
      componentId: this.componentId,
      configurationId: this.configId,
      rowId: mapping.rowId ?? null,
    };
    const loaded: LoadedTable[] = [];
    for (const file of files) loaded.push(await this.loadOne(folder, file, logger, bySource.get(file), origin));
    return loaded;
  }

  private async loadOne(
    folder: DataFolder,
    file: string,
    logger: Logger,
    entry: OutputMappingEntry | undefined,
    origin: LoadOrigin,
  ): Promise<LoadedTable> {
    const path = folder.tableFile(file);
    try {
      const read = await readManifest(`${path}.manifest`);
      const effective = effectiveLoad(read, entry, () =>
        defaultDestination(defaultBucketId(this.componentId, this.configId), file),
      );
      const { manifest } = effective;
      const parsed = parseLoadManifest(
        manifest,
        entry ? `${file} (${entry.where} over its manifest)` : `${file}.manifest`,
      );
      if (effective.headerMustBe && entry) {
        const header = await readCsvHeader(path, {
          label: file,
          delimiter: parsed.delimiter,
          enclosure: parsed.enclosure,
        });
        checkHeader(file, header, effective.headerMustBe, `storage.output.tables (${entry.where})`);
      }
      const result = await this.tables.load(path, manifest, origin);
      const table: LoadedTable = {
        file,
        tableId: result.tableId,
        rows: result.rowsInFile,
        incremental: parsed.incremental,
        primaryKey: [...parsed.primaryKey],
        reason: effective.reason,
      };
      const how = table.incremental
        ? `incremental${table.primaryKey.length > 0 ? `, key ${table.primaryKey.map(displayId).join(', ')}` : ''}`
        : 'full load';
      logger.info(
        {
          table: file,
          tableId: table.tableId,
          rows: table.rows,
          incremental: table.incremental,
          primaryKey: table.primaryKey,
          tableCreated: result.tableCreated,
          columnsAdded: result.columnsAdded,
          destinationFrom: table.reason,
        },
        `Loaded table ${displayId(table.tableId)}: ${plural(table.rows, 'row')} (${how})` +
          (result.columnsAdded.length > 0
            ? `, new ${result.columnsAdded.length === 1 ? 'column' : 'columns'} ${result.columnsAdded.slice(0, 10).map(displayId).join(', ')}${result.columnsAdded.length > 10 ? ` and ${groupThousands(result.columnsAdded.length - 10)} more` : ''}`
            : ''),
      );
      return table;
    } catch (error) {
      // the message names the file; the user's mistakes stay user errors (exit code 1)
      const message = `Cannot load out/tables/${displayText(file)} into the project: ${(error as Error).message}`;
      throw error instanceof UserError
        ? new UserError(error.gexCode, message, { cause: error })
        : new Error(message, { cause: error });
    }
  }
}
