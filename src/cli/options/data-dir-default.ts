import { existsSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';

/** Where `gex run` and `gex check` take their data folder from when `--data-dir` is not given. */
export interface DataDirChoice {
  dir: string;
  /** why this folder, said in the log and in errors: "./data exists in the working folder" */
  source: string;
  /** whether the folder exists (a stored configuration's run creates a missing one) */
  exists: boolean;
}

/** The folder Keboola's runner mounts a job's data folder at, inside its container. */
const CONTAINER_DATA_DIR = '/data';
const LOCAL_DATA_DIR = './data';

/**
 * Whether gex runs inside a container: `KBC_DATADIR` is set or Docker's marker file `/.dockerenv`
 * exists; `GEX_CONTAINER=1|0` overrides the guess (Podman, other runtimes, tests).
 */
export function insideContainer(env: NodeJS.ProcessEnv, exists: (file: string) => boolean = existsSync): boolean {
  if (env.GEX_CONTAINER === '1') return true;
  if (env.GEX_CONTAINER === '0') return false;
  return Boolean(env.KBC_DATADIR) || exists('/.dockerenv');
}

/**
 * The default data folder, in this order: `$KBC_DATADIR` (Keboola's runner and gex's image set
 * it); `./data` when it exists (where the user stands wins, also inside a development container);
 * `/data` inside a container when it exists (Keboola mounts it there); else `./data`, which a
 * stored configuration's run creates. `/data` at the root is never created: it is used only when
 * it is there already.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv, exists: (file: string) => boolean = existsSync): DataDirChoice {
  if (env.KBC_DATADIR)
    return { dir: env.KBC_DATADIR, source: '$KBC_DATADIR names it', exists: exists(env.KBC_DATADIR) };
  if (exists(LOCAL_DATA_DIR))
    return { dir: LOCAL_DATA_DIR, source: './data exists in the working folder', exists: true };
  const container = insideContainer(env, exists);
  if (container && exists(CONTAINER_DATA_DIR)) {
    return {
      dir: CONTAINER_DATA_DIR,
      source: 'there is no ./data in the working folder, and inside a container the data folder is /data',
      exists: true,
    };
  }
  return {
    dir: LOCAL_DATA_DIR,
    source: container
      ? 'there is neither ./data in the working folder nor /data (the data folder inside a container)'
      : 'there is no ./data in the working folder',
    exists: false,
  };
}

/** "./data (/home/me/data)": a folder as given and where that is. */
export function describeDataDir(dir: string): string {
  const absolute = path.resolve(dir);
  return absolute === dir ? displayText(dir) : `${displayText(dir)} (${displayText(absolute)})`;
}

/**
 * The data folder of a data-folder run (no `--config-id`) or check: the one given, else the
 * default, which must exist — a run that silently read some other folder would be worse than none.
 * `onDefault` hears which default folder was taken and why.
 */
export function dataFolderOfRun(
  given: string | undefined,
  env: NodeJS.ProcessEnv,
  exists: (file: string) => boolean = existsSync,
  onDefault?: (choice: DataDirChoice) => void,
): string {
  if (given !== undefined) return given;
  const choice = defaultDataDir(env, exists);
  if (!choice.exists) {
    const where = env.KBC_DATADIR
      ? `$KBC_DATADIR names ${describeDataDir(choice.dir)}, which does not exist`
      : insideContainer(env, exists)
        ? `neither ./data (${displayText(path.resolve(LOCAL_DATA_DIR))}) nor /data (the data folder inside a container) exists`
        : `./data (${displayText(path.resolve(LOCAL_DATA_DIR))}) does not exist`;
    throw new UserError(
      'GEX_DATA_FOLDER_INVALID',
      `No data folder: --data-dir was not given and ${where}. ` +
        'Run gex in the folder that holds data/ (with its config.json), or point --data-dir (or $KBC_DATADIR) at a folder with config.json.',
    );
  }
  onDefault?.(choice);
  return choice.dir;
}
