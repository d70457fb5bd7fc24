import { UserError } from '../common/errors.js';
import { displayId } from '../common/log-text.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import { sentence } from '../common/text.js';
import { phpToString } from '../php/index.js';
import type { ConfigStore } from './config-store.js';
import { CONFIGURATION_STEP, ImportStepFailed, importStep, ORDER_STEP, rowStep } from './import-step.js';
import type { Configuration, ImportConfigurationInput } from './types.js';

function text(o: JsonObject, key: string): string | undefined {
  const v = o.get(key);
  return v === undefined || v === null ? undefined : phpToString(v);
}

/**
 * The document `gex configs import` reads and `gex configs export` writes:
 * `{name, configurationId?, description?, isDisabled?, configuration, state?,
 *   rows: [{rowId?, name?, description?, isDisabled?, configuration, state?}], rowsSortOrder?}`;
 * its shape is checked before anything is created.
 */
export function readImportDocument(document: JsonValue): ImportConfigurationInput {
  if (!isJsonObject(document) || typeof document.get('name') !== 'string') {
    throw new UserError('GEX_INPUT_INVALID', 'A configuration document is a JSON object with at least a "name"');
  }
  const rows = document.get('rows') ?? [];
  if (!Array.isArray(rows))
    throw new UserError('GEX_INPUT_INVALID', '"rows" of a configuration document must be a list of row objects');
  const order = document.get('rowsSortOrder') ?? [];
  if (!Array.isArray(order))
    throw new UserError('GEX_INPUT_INVALID', '"rowsSortOrder" of a configuration document must be a list of row ids');
  return {
    configuration: {
      name: text(document, 'name')!,
      configurationId: text(document, 'configurationId'),
      description: text(document, 'description'),
      isDisabled: document.get('isDisabled') === true,
      configuration: document.get('configuration') ?? undefined,
      state: document.get('state') ?? undefined,
      changeDescription: 'Imported from a file',
    },
    rows: rows.map((row, i) => {
      if (!isJsonObject(row))
        throw new UserError('GEX_INPUT_INVALID', `rows[${i}] of the configuration document must be an object`);
      return {
        rowId: text(row, 'rowId'),
        name: text(row, 'name'),
        description: text(row, 'description'),
        isDisabled: row.get('isDisabled') === true,
        configuration: row.get('configuration') ?? undefined,
        state: row.get('state') ?? undefined,
      };
    }),
    rowsSortOrder: order.map((id) => phpToString(id)),
  };
}

async function create(
  store: ConfigStore,
  componentId: string,
  plan: ImportConfigurationInput,
  onCreated: (id: string) => void,
): Promise<Configuration> {
  const created = await importStep(CONFIGURATION_STEP, () =>
    store.createConfiguration(componentId, plan.configuration),
  );
  onCreated(created.id);
  for (const [i, row] of plan.rows.entries()) {
    await importStep(rowStep(i, row.rowId), () => store.createRow(componentId, created.id, row));
  }
  if (plan.rowsSortOrder.length > 0) {
    await importStep(ORDER_STEP, () =>
      store.updateConfiguration(componentId, created.id, {
        rowsSortOrder: plan.rowsSortOrder,
        changeDescription: 'Imported from a file: row order',
      }),
    );
  }
  return store.getConfiguration(componentId, created.id);
}

function reason(error: unknown): string {
  return (error as Error).message;
}

/** The step's error with what happened to the rest; a user error stays one (exit 1), anything else keeps its kind. */
function failed(error: unknown, outcome: string): Error {
  if (!(error instanceof ImportStepFailed)) return error as Error;
  const message = `Import failed at ${error.step}: ${sentence(reason(error.failure))} ${outcome}`;
  return error.failure instanceof UserError
    ? new UserError(error.failure.gexCode, message, { cause: error.failure })
    : new Error(message, { cause: error.failure });
}

/**
 * Creates a configuration with its rows and their order from one document, all or nothing. The
 * embedded store does it as one change: one transaction, one configuration version. A Storage API
 * has neither: every row is a call (and a version); when a step fails, the configuration created
 * so far is deleted (trash, then purge); if that fails too, the error says so and names the
 * configuration left behind.
 */
export async function importConfiguration(
  store: ConfigStore,
  componentId: string,
  document: JsonValue,
): Promise<Configuration> {
  const plan = readImportDocument(document);
  if (store.importConfiguration) {
    try {
      return await store.importConfiguration(componentId, plan);
    } catch (error) {
      throw failed(error, 'Nothing was imported (one transaction, rolled back).');
    }
  }
  let createdId: string | undefined;
  try {
    return await create(store, componentId, plan, (id) => (createdId = id));
  } catch (error) {
    if (createdId === undefined) throw failed(error, 'Nothing was imported.');
    const id = createdId;
    try {
      await store.deleteConfiguration(componentId, id);
      await store.deleteConfiguration(componentId, id);
    } catch (cleanup) {
      throw failed(
        error,
        `The configuration ${displayId(id)} created so far could NOT be removed (${reason(cleanup)}): remove it with ` +
          `"gex configs delete ${displayId(id)}" and "gex configs purge ${displayId(id)} --yes".`,
      );
    }
    throw failed(error, `The configuration ${displayId(id)} created so far was removed again (deleted and purged).`);
  }
}
