import { UserError } from '../common/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import { phpToString } from '../php/index.js';
import type { ConfigStore } from './config-store.js';
import type { Configuration } from './types.js';

function text(o: JsonObject, key: string): string | undefined {
  const v = o.get(key);
  return v === undefined || v === null ? undefined : phpToString(v);
}

/**
 * Creates a configuration with its rows from one JSON document:
 * `{name, configurationId?, description?, configuration, state?, rows: [{rowId?, name?, isDisabled?, configuration, state?}], rowsSortOrder?}`.
 */
export async function importConfiguration(store: ConfigStore, componentId: string, document: JsonValue): Promise<Configuration> {
  if (!isJsonObject(document) || typeof document.get('name') !== 'string') {
    throw new UserError('A configuration document is a JSON object with at least a "name"');
  }
  const created = await store.createConfiguration(componentId, {
    name: text(document, 'name')!,
    configurationId: text(document, 'configurationId'),
    description: text(document, 'description'),
    configuration: document.get('configuration') ?? undefined,
    state: document.get('state') ?? undefined,
    changeDescription: 'Imported from a file',
  });
  const rows = document.get('rows');
  for (const [i, row] of (Array.isArray(rows) ? rows : []).entries()) {
    if (!isJsonObject(row)) throw new UserError(`rows[${i}] must be an object`);
    await store.createRow(componentId, created.id, {
      rowId: text(row, 'rowId'),
      name: text(row, 'name'),
      description: text(row, 'description'),
      isDisabled: row.get('isDisabled') === true,
      configuration: row.get('configuration') ?? undefined,
      state: row.get('state') ?? undefined,
    });
  }
  const order = document.get('rowsSortOrder');
  if (Array.isArray(order) && order.length > 0) {
    await store.updateConfiguration(componentId, created.id, { rowsSortOrder: order.map((id) => phpToString(id)) });
  }
  return store.getConfiguration(componentId, created.id);
}
