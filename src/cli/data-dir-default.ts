import { existsSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../common/errors.js';
import { displayText } from '../common/log-text.js';

/** Where `gex run` looks for its data folder when `--data-dir` is not given. */
export interface DataDirChoice {
  dir: string;
  /** why this folder: shown when it does not exist */
  source: string;
}

/**
 * Inside a container (Keboola's runner mounts the data folder at /data) the default stays `/data`;
 * on a workstation `/data` is rarely meant, so the default is `./data`. A container is told by
 * `KBC_DATADIR` being set or Docker's marker file `/.dockerenv`; `GEX_CONTAINER=1|0` overrides
 * the guess (Podman, other runtimes, tests).
 */
export function insideContainer(env: NodeJS.ProcessEnv, exists: (file: string) => boolean = existsSync): boolean {
  if (env.GEX_CONTAINER === '1') return true;
  if (env.GEX_CONTAINER === '0') return false;
  return Boolean(env.KBC_DATADIR) || exists('/.dockerenv');
}

export function defaultDataDir(env: NodeJS.ProcessEnv, exists: (file: string) => boolean = existsSync): DataDirChoice {
  if (env.KBC_DATADIR) return { dir: env.KBC_DATADIR, source: '$KBC_DATADIR' };
  if (insideContainer(env, exists)) return { dir: '/data', source: 'the default inside a container' };
  return { dir: './data', source: 'the default outside a container' };
}

/**
 * The data folder of a data-folder run (no `--config-id`): the one given, else the default, which
 * must exist — a run that silently read some other folder would be worse than none.
 */
export function dataFolderOfRun(given: string | undefined, env: NodeJS.ProcessEnv, exists: (file: string) => boolean = existsSync): string {
  if (given !== undefined) return given;
  const choice = defaultDataDir(env, exists);
  if (!exists(choice.dir)) {
    throw new UserError(
      `No data folder: --data-dir was not given and ${displayText(choice.dir)} (${choice.source}; ${displayText(path.resolve(choice.dir))}) does not exist. ` +
        'Run gex where the data folder ./data is, or point --data-dir (or $KBC_DATADIR) at a folder with config.json.',
    );
  }
  return choice.dir;
}
