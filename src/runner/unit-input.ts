import { UserError } from '../common/errors.js';
import { displayId, displayText } from '../common/log-text.js';
import type { SecretMasker } from '../common/secret-masker.js';
import type { DataFolderInput } from '../extractor/data-folder.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import type { OpenedStore } from '../store/open-config-store.js';
import { StoreError } from '../store/store-error.js';
import type { Configuration } from '../store/types.js';
import type { ComponentConfig } from './effective-configuration.js';

/** A stored configuration with its rows; one that does not exist is a user error naming the store. */
export async function loadConfiguration(store: OpenedStore, componentId: string, configId: string): Promise<Configuration> {
  try {
    return await store.store.getConfiguration(componentId, configId);
  } catch (error) {
    if (error instanceof StoreError && error.status === 404) {
      throw new UserError(`Configuration ${displayId(configId)} of component ${displayId(componentId)} not found in ${store.location}: ${displayText(error.message)}`);
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
 * goes to disk keeps the stored, encrypted form), each registered with the masker.
 */
export async function decryptedInput(
  store: OpenedStore,
  componentId: string,
  stored: ComponentConfig,
  componentState: JsonObject,
  imageParameters: JsonObject,
  masker: SecretMasker,
): Promise<DataFolderInput> {
  const decrypt = async (value: JsonValue) => (await store.decryptSecrets(componentId, value)) as JsonObject;
  const parameters = await decrypt(stored.parameters);
  const authorization = await decrypt(stored.authorization);
  const state = await decrypt(componentState);
  // the registry's secrets too: config.json keeps their cipher, the component gets the plaintext
  const plainImageParameters = (await store.decryptComponentSecrets(componentId, imageParameters)) as JsonObject;
  for (const value of [parameters, authorization, state, plainImageParameters]) masker.addFromConfig(value);
  return { parameters, action: 'run', imageParameters: plainImageParameters, authorization, state };
}
