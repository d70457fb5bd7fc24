import { builtinComponents } from '../../src/cli/builtin-components.js';
import {
  openConfigStore as openAnyConfigStore,
  type OpenConfigStoreOptions,
  type OpenedStore,
} from '../../src/store/open-config-store.js';
import { openEmbeddedStore as openEmbedded, type OpenEmbeddedStoreOptions } from '../../src/store/open-store.js';
import type { EmbeddedBackend } from '../../src/store/embedded/embedded-backend.js';

export type { OpenedStore };

/** The store openers as gex's CLI calls them: with its built-in components (Generic Extractor). */
export function openEmbeddedStore(
  location: string,
  env: NodeJS.ProcessEnv = process.env,
  options: OpenEmbeddedStoreOptions = {},
): Promise<EmbeddedBackend> {
  return openEmbedded(location, env, { builtinComponents: builtinComponents(), ...options });
}

export function openConfigStore(location: string, options: OpenConfigStoreOptions = {}): Promise<OpenedStore> {
  return openAnyConfigStore(location, { builtinComponents: builtinComponents(), ...options });
}
