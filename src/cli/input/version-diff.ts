import { displayText } from '../../common/log-text.js';
import { stringifyExact, type JsonObject, type JsonValue } from '../../json/index.js';
import type { ConfigVersionDetail } from '../../store/types.js';
import { differences, type Difference } from './changed-paths.js';
import { formatPath } from './json-path.js';

/**
 * `gex configs diff`: what changed between two versions of a configuration — its name,
 * description, disabled flag, body, rows (by id) and their order — as one line per changed value.
 * `#` values are the store's ciphers: a line says that one changed, never shows it.
 */

/** What a version holds that a person changes, as one JSON tree (rows keyed by id). */
function snapshot(version: ConfigVersionDetail): JsonObject {
  const rows: JsonObject = new Map(
    version.rows.map((row): [string, JsonValue] => [
      row.id,
      new Map<string, JsonValue>([
        ['name', row.name],
        ['description', row.description],
        ['isDisabled', row.isDisabled],
        ['configuration', row.configuration],
      ]),
    ]),
  );
  return new Map<string, JsonValue>([
    ['name', version.name],
    ['description', version.description],
    ['isDisabled', version.isDisabled],
    ['configuration', version.configuration],
    ['rowsSortOrder', version.rowsSortOrder],
    ['rows', rows],
  ]);
}

export interface VersionChange {
  /** `configuration.parameters.api.baseUrl`, `rows.users.configuration…`, `rows.orders` (a whole row) */
  path: string;
  change: 'added' | 'removed' | 'changed';
  before?: JsonValue;
  after?: JsonValue;
  /** the value is under a `#` key: a cipher, which the text lines do not show */
  encrypted?: true;
}

/** Every value that differs from version `from` to version `to`. */
export function versionChanges(from: ConfigVersionDetail, to: ConfigVersionDetail): VersionChange[] {
  return differences(snapshot(from), snapshot(to)).map((d: Difference) => {
    const last = d.path[d.path.length - 1];
    return {
      path: formatPath(d.path),
      change: d.before === undefined ? 'added' : d.after === undefined ? 'removed' : 'changed',
      ...(d.before === undefined ? {} : { before: d.before }),
      ...(d.after === undefined ? {} : { after: d.after }),
      ...(typeof last === 'string' && last.startsWith('#') ? { encrypted: true as const } : {}),
    };
  });
}

const MAX_SHOWN = 80;

/** A value as one short safe token: compact JSON, cut; a `#` value only as "(encrypted)". */
function shown(value: JsonValue, encrypted: boolean): string {
  if (encrypted) return '(encrypted)';
  const text = stringifyExact(value);
  return displayText(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text);
}

/** The changes as lines for a person: `~ path: before → after`, `+ path: value`, `- path: value`. */
export function changeLines(changes: readonly VersionChange[]): string[] {
  return changes.map((c) => {
    const path = displayText(c.path);
    const secret = c.encrypted === true;
    if (c.change === 'added') return `  + ${path}: ${shown(c.after!, secret)}`;
    if (c.change === 'removed') return `  - ${path}: ${shown(c.before!, secret)}`;
    return `  ~ ${path}: ${shown(c.before!, secret)} → ${shown(c.after!, secret)}`;
  });
}
