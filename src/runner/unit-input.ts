import { UserError } from '../common/errors.js';
import { displayId, displayText } from '../common/log-text.js';
import type { SecretMasker } from '../common/secret-masker.js';
import type { DataFolderInput } from '../extractor/data-folder.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import { SecretNotDecrypted } from '../store/encryption.js';
import type { OpenedStore } from '../store/open-config-store.js';
import { StoreError } from '../store/store-error.js';
import type { Configuration } from '../store/types.js';
import type { ComponentConfig } from './effective-configuration.js';

/** A stored configuration with its rows; one that does not exist is a user error naming the store. */
export async function loadConfiguration(
  store: OpenedStore,
  componentId: string,
  configId: string,
): Promise<Configuration> {
  try {
    return await store.store.getConfiguration(componentId, configId);
  } catch (error) {
    if (error instanceof StoreError && error.status === 404) {
      throw new UserError(
        'GEX_CONFIG_NOT_FOUND',
        `Configuration ${displayId(configId)} of component ${displayId(componentId)} not found in ${store.location}: ${displayText(error.message)}`,
      );
    }
    throw error;
  }
}

/** Image parameters come from the component registry, at run time, never from the configuration. */
export async function componentImageParameters(store: OpenedStore, componentId: string): Promise<JsonObject> {
  try {
    const component = await store.store.getComponent(componentId);
    const data = isJsonObject(component.definition) ? component.definition.get('data') : undefined;
    const params = isJsonObject(data) ? data.get('image_parameters') : undefined;
    return isJsonObject(params) ? params : new Map();
  } catch {
    return new Map();
  }
}

/**
 * What the extractor gets for one configuration or row: its secrets decrypted in memory only (what
 * goes to disk keeps the stored, encrypted form), each registered with the masker — by the store's
 * key, or by a remote store's server for a runner token: one path, one registration. A `#` value
 * that does not decrypt is a UserError naming the row (`rowId`, null for the configuration) and
 * the key path (`parameters.#token`), never the value.
 */
export async function decryptedInput(
  store: OpenedStore,
  componentId: string,
  stored: ComponentConfig,
  componentState: JsonObject,
  imageParameters: JsonObject,
  masker: SecretMasker,
  rowId: string | null = null,
): Promise<DataFolderInput> {
  const owner = rowId === null ? 'the configuration' : `row ${displayId(rowId)}`;
  const decrypt = async (part: string, value: JsonValue, decryptPart: (value: JsonValue) => Promise<JsonValue>) => {
    try {
      return (await decryptPart(value)) as JsonObject;
    } catch (error) {
      throw notDecrypted(error, part, owner, componentId);
    }
  };
  const ofConfiguration = (value: JsonValue) => store.decryptSecrets(componentId, value);
  const parameters = await decrypt('parameters', stored.parameters, ofConfiguration);
  const authorization = await decrypt('authorization', stored.authorization, ofConfiguration);
  const state = await decrypt('state.component', componentState, ofConfiguration);
  // the registry's secrets too: config.json keeps their cipher, the component gets the plaintext
  const plainImageParameters = await decrypt('image_parameters', imageParameters, (value) =>
    store.decryptComponentSecrets(componentId, value),
  );
  for (const value of [parameters, authorization, state, plainImageParameters]) masker.addFromConfig(value);
  return { parameters, action: 'run', imageParameters: plainImageParameters, authorization, state };
}

/** A decryption failure as one line: where the value is (part, key path, row) and what to do. */
function notDecrypted(error: unknown, part: string, owner: string, componentId: string): unknown {
  if (error instanceof SecretNotDecrypted) {
    const fix =
      error.fix ??
      (part === 'image_parameters'
        ? `Register the component ${displayId(componentId)} again in this store (gex components import), or run with the master key of the store that encrypted it (GEX_MASTER_KEY).`
        : 'Run with the master key of the store that encrypted it (GEX_MASTER_KEY), or enter the secret again in this store (gex configs edit, gex rows edit).');
    return new UserError(
      'GEX_SECRET_NOT_DECRYPTED',
      `Cannot decrypt ${displayText(`${part}.${error.keyPath}`)} of ${owner}: ${error.reason}. ${fix}`,
      { cause: error },
    );
  }
  if (error instanceof UserError)
    return new UserError('GEX_SECRET_NOT_DECRYPTED', `Cannot decrypt the ${part} of ${owner}: ${error.message}`, {
      cause: error,
    });
  return error;
}
