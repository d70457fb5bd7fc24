import type { JsonObject, JsonValue } from '../json/index.js';
import type { Configuration, Row } from './types.js';

function object(entries: Array<[string, JsonValue]>): JsonObject {
  return new Map(entries);
}

function rowDocument(row: Row): JsonObject {
  return object([
    ['rowId', row.id],
    ['name', row.name],
    ['description', row.description],
    ['isDisabled', row.isDisabled],
    ['configuration', row.configuration],
    ['state', row.state],
  ]);
}

/**
 * A configuration as the document `importConfiguration` reads (see there), ids included, so that
 * export → import → export gives the same document. Bodies are as stored: `#` values stay the
 * store's ciphers; versions, timestamps and creator tokens are not part of it.
 */
export function exportConfiguration(c: Configuration): JsonObject {
  return object([
    ['name', c.name],
    ['configurationId', c.id],
    ['description', c.description],
    ['isDisabled', c.isDisabled],
    ['configuration', c.configuration],
    ['state', c.state],
    ['rows', c.rows.map(rowDocument)],
    ['rowsSortOrder', c.rowsSortOrder],
  ]);
}
