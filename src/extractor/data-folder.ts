import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, UserError } from '../common/errors.js';
import { fileInTheWay } from '../common/file-in-the-way.js';
import { resolveInside } from '../common/safe-path.js';
import {
  decodeJson,
  isJsonObject,
  JsonSyntaxError,
  stringifyExact,
  type JsonObject,
  type JsonValue,
} from '../json/index.js';
import { stateFileText } from './extractor-state.js';
import { FolderGuard } from './folder-guard.js';
import { WORK_FOLDERS } from './output/table-files.js';

/** What a component reads from a data folder (Keboola's common interface). */
export interface DataFolderInput {
  parameters: JsonObject;
  action: string;
  imageParameters: JsonObject;
  authorization: JsonObject;
  state: JsonObject;
}

/**
 * A data folder in Keboola's common interface, the one place that knows its layout:
 * `config.json` and `in/state.json` going in, `out/tables/` and `out/state.json` coming out.
 * The data-folder mode reads one the user made; the runner writes one per row and the extractor
 * fills its `out/` (docs/design.md#data-folders).
 */
export class DataFolder {
  readonly dir: string;
  /** every write below the data folder goes through it: no symbolic link is followed (FolderGuard) */
  readonly guard: FolderGuard;

  /** `root`: the data folder this one is in (a row's folder is in `<data>/rows/`); default: itself */
  constructor(dir: string, root: string = dir) {
    this.dir = path.resolve(dir);
    this.guard = new FolderGuard(root);
  }

  get configFile(): string {
    return resolveInside(this.dir, 'config.json');
  }

  get inputDir(): string {
    return resolveInside(this.dir, 'in');
  }

  get inputStateFile(): string {
    return resolveInside(this.inputDir, 'state.json');
  }

  /** `in/tables`: the input mapping's tables */
  get inputTablesDir(): string {
    return resolveInside(this.inputDir, 'tables');
  }

  get outputDir(): string {
    return resolveInside(this.dir, 'out');
  }

  get outputStateFile(): string {
    return resolveInside(this.outputDir, 'state.json');
  }

  get tablesDir(): string {
    return resolveInside(this.outputDir, 'tables');
  }

  /** gex's own folders in out/tables while tables are completed (see OutputWriter) */
  get workDirs(): string[] {
    return [resolveInside(this.tablesDir, WORK_FOLDERS.staging), resolveInside(this.tablesDir, WORK_FOLDERS.parts)];
  }

  /** A table file in `out/tables` (the name is checked to stay inside it). */
  tableFile(name: string): string {
    return resolveInside(this.tablesDir, name);
  }

  /** The component's input: `config.json` (required) and `in/state.json` (optional). */
  async read(): Promise<DataFolderInput> {
    const config = await readJsonFile(this.configFile, 'configuration file');
    if (!config) {
      throw new UserError(
        'GEX_DATA_FOLDER_INVALID',
        `No configuration file at ${this.configFile}. Point --data-dir (or KBC_DATADIR) at a folder with config.json.`,
      );
    }
    const action = config.get('action');
    const state = (await readJsonFile(this.inputStateFile, 'state file')) ?? new Map();
    return {
      parameters: objectAt(config, 'parameters'),
      action: typeof action === 'string' && action !== '' ? action : 'run',
      imageParameters: objectAt(config, 'image_parameters'),
      authorization: objectAt(config, 'authorization'),
      state,
    };
  }

  /** Writes the component's input (what `read()` reads back): `config.json` and `in/state.json`. */
  async writeInput(config: JsonObject, state: JsonValue): Promise<void> {
    await this.guard.writeFile(this.configFile, stringifyExact(config));
    await this.guard.writeFile(this.inputStateFile, stringifyExact(state));
  }

  /** `out/state.json` as Generic Extractor writes it. */
  async writeOutputState(state: JsonObject): Promise<void> {
    await this.guard.writeFile(this.outputStateFile, stateFileText(state));
  }

  /**
   * Before the first request of a run: no path the run writes here is a symbolic link (or of the
   * wrong kind), and each folder it writes in takes a file — proven with a probe file, so that a
   * folder owned by another user or a read-only disk is reported now, not after every request.
   * `input`: the run also writes the input (config.json, in/), as a stored configuration's does.
   */
  async checkWritable(options: { input: boolean }): Promise<void> {
    const files = [this.outputStateFile, ...(options.input ? [this.configFile, this.inputStateFile] : [])];
    for (const file of files) await this.guard.inspect(file, 'file');
    const folders = [
      this.dir,
      this.outputDir,
      this.tablesDir,
      ...this.workDirs,
      ...(options.input ? [this.inputDir, this.inputTablesDir] : []),
    ];
    const proven = new Set<string>();
    for (const folder of folders) await this.guard.proveWritable(folder, proven);
  }
}

async function readJsonFile(file: string, what: string): Promise<JsonObject | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    const inTheWay = (e as NodeJS.ErrnoException).code === 'ENOTDIR' ? fileInTheWay(file) : undefined;
    if (inTheWay)
      throw new UserError(
        'GEX_DATA_FOLDER_INVALID',
        `Cannot read ${what} ${file}: ${inTheWay} is a file, not a folder. Point --data-dir at the data folder.`,
      );
    throw new UserError('GEX_DATA_FOLDER_INVALID', `Cannot read ${what} ${file}: ${(e as Error).message}`);
  }
  try {
    const value = decodeJson(text);
    // a JSON list is a PHP array too: GE reads `[]` (how PHP writes an empty state) as no state
    if (Array.isArray(value)) return new Map(value.map((item, i) => [String(i), item]));
    if (!isJsonObject(value))
      throw new UserError('GEX_DATA_FOLDER_INVALID', `${what} ${file} must hold a JSON object or array`);
    return value;
  } catch (e) {
    if (e instanceof JsonSyntaxError)
      throw new UserError('GEX_DATA_FOLDER_INVALID', `${what} ${file} is not valid JSON: ${e.message}`);
    throw e;
  }
}

function objectAt(config: JsonObject, key: string): JsonObject {
  const value = config.get(key);
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return new Map();
  if (!isJsonObject(value)) throw new ConfigError(key, `must be an object, got ${JSON.stringify(typeof value)}`);
  return value;
}
