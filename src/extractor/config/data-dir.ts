import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, UserError } from '../../common/errors.js';
import { decodeJson, isJsonObject, JsonSyntaxError, type JsonObject } from '../../json/index.js';

/** What a component reads from the Keboola common-interface data folder. */
export interface DataDirInput {
  parameters: JsonObject;
  action: string;
  imageParameters: JsonObject;
  authorization: JsonObject;
  state: JsonObject;
}

export async function readJsonFile(file: string, what: string): Promise<JsonObject | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UserError(`Cannot read ${what} ${file}: ${(e as Error).message}`);
  }
  try {
    const value = decodeJson(text);
    // a JSON list is a PHP array too: GE reads `[]` (how PHP writes an empty state) as no state
    if (Array.isArray(value)) return new Map(value.map((item, i) => [String(i), item]));
    if (!isJsonObject(value)) throw new UserError(`${what} ${file} must hold a JSON object or array`);
    return value;
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw new UserError(`${what} ${file} is not valid JSON: ${e.message}`);
    throw e;
  }
}

function objectAt(config: JsonObject, key: string): JsonObject {
  const value = config.get(key);
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) return new Map();
  if (!isJsonObject(value)) throw new ConfigError(key, `must be an object, got ${JSON.stringify(typeof value)}`);
  return value;
}

export async function readDataDir(dataDir: string): Promise<DataDirInput> {
  const configFile = path.join(dataDir, 'config.json');
  const config = await readJsonFile(configFile, 'configuration file');
  if (!config) {
    throw new UserError(`No configuration file at ${configFile}. Point --data-dir (or KBC_DATADIR) at a folder with config.json.`);
  }
  const action = config.get('action');
  const state = (await readJsonFile(path.join(dataDir, 'in', 'state.json'), 'state file')) ?? new Map();
  return {
    parameters: objectAt(config, 'parameters'),
    action: typeof action === 'string' && action !== '' ? action : 'run',
    imageParameters: objectAt(config, 'image_parameters'),
    authorization: objectAt(config, 'authorization'),
    state,
  };
}

export async function writeStateFile(dataDir: string, text: string): Promise<void> {
  await mkdir(path.join(dataDir, 'out'), { recursive: true });
  await writeFile(path.join(dataDir, 'out', 'state.json'), text);
}
