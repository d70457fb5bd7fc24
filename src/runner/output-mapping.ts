import { UserError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { displayId, displayText } from '../common/log-text.js';
import { groupThousands, plural } from '../common/text.js';
import type { DataFolder } from '../extractor/data-folder.js';
import { parseLoadManifest, readManifest, type ProjectTables } from '../store/tables/index.js';
import { defaultBucketId, defaultDestination } from './default-bucket.js';

/** One table file of a unit, loaded into the project. */
export interface LoadedTable {
  /** the file's name in out/tables */
  file: string;
  tableId: string;
  rows: number;
  incremental: boolean;
  primaryKey: string[];
}

/**
 * Keboola's output mapping for one run: after a unit succeeds, each table file it wrote to
 * `out/tables` is loaded with its manifest into the project's Storage tables, one transaction per
 * table, before the next unit starts. A file whose manifest names no destination goes to the
 * configuration's default bucket.
 */
export class OutputMapping {
  constructor(
    private readonly tables: ProjectTables,
    private readonly componentId: string,
    private readonly configId: string,
  ) {}

  /** Loads `files` (names in the folder's out/tables) in order; the first failure stops and is thrown. */
  async load(folder: DataFolder, files: readonly string[], logger: Logger): Promise<LoadedTable[]> {
    const loaded: LoadedTable[] = [];
    for (const file of files) loaded.push(await this.loadOne(folder, file, logger));
    return loaded;
  }

  private async loadOne(folder: DataFolder, file: string, logger: Logger): Promise<LoadedTable> {
    const path = folder.tableFile(file);
    try {
      const manifest = await readManifest(`${path}.manifest`);
      const needsDefault =
        typeof manifest === 'object' && manifest !== null && (manifest as Record<string, unknown>).destination == null;
      const fallback = needsDefault
        ? defaultDestination(defaultBucketId(this.componentId, this.configId), file)
        : undefined;
      const parsed = parseLoadManifest(manifest, `${file}.manifest`, fallback);
      const result = await this.tables.load(path, manifest, fallback);
      const table: LoadedTable = {
        file,
        tableId: result.tableId,
        rows: result.rowsInFile,
        incremental: parsed.incremental,
        primaryKey: [...parsed.primaryKey],
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
