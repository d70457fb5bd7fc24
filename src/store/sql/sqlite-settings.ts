import { UserError } from '../../common/errors.js';

/**
 * How hard SQLite works to keep an acknowledged write through an OS crash or power loss.
 * `full`: every commit is fsynced before it is acknowledged (SQLite `synchronous=FULL`).
 * `normal`: in WAL mode commits are fsynced only at checkpoints, so the last transactions
 * before a power loss can be lost (never corrupted); faster on slow disks.
 */
export type SqliteDurability = 'full' | 'normal';

export const DURABILITY_LEVELS: readonly SqliteDurability[] = ['full', 'normal'];
export const DEFAULT_DURABILITY: SqliteDurability = 'full';
export const DURABILITY_VARIABLE = 'GEX_SQLITE_SYNCHRONOUS';

/** `value` as a durability level; `source` names where it came from in the error. */
export function parseDurability(value: string, source: string): SqliteDurability {
  const normalised = value.trim().toLowerCase();
  if ((DURABILITY_LEVELS as readonly string[]).includes(normalised)) return normalised as SqliteDurability;
  throw new UserError(
    'GEX_SETTING_INVALID',
    `Invalid ${source} "${value}": expected one of ${DURABILITY_LEVELS.join(', ')} (full keeps every acknowledged write through a power loss)`,
  );
}

/** The level of GEX_SQLITE_SYNCHRONOUS; unset or empty = the default (full). */
export function durabilityFromEnv(env: NodeJS.ProcessEnv): SqliteDurability {
  const value = env[DURABILITY_VARIABLE];
  return value === undefined || value.trim() === '' ? DEFAULT_DURABILITY : parseDurability(value, DURABILITY_VARIABLE);
}
