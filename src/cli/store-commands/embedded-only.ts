import { UserError } from '../../common/errors.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import { isRemoteStore, storeLocationFromArgs } from '../../store/store-location.js';
import { builtinComponents } from '../builtin-components.js';

/**
 * Runs `work` on the embedded store the arguments name (`--store`, `$KBC_URL`, `$GEX_STORE`), for
 * what only the store itself can do (tokens, the component registry); a Storage API is refused
 * with `refusal` ("Tokens are created …").
 */
export async function withEmbeddedBackend<T>(
  option: string | undefined,
  refusal: string,
  work: (backend: EmbeddedBackend) => Promise<T>,
  options: { mustExist?: boolean } = {},
): Promise<T> {
  const location = storeLocationFromArgs(option);
  if (isRemoteStore(location))
    throw new UserError('GEX_CLI_USAGE', `${refusal}: pass --store with a SQLite file or a postgres:// URL`);
  const { openEmbeddedStore } = await import('../../store/open-store.js');
  const backend = await openEmbeddedStore(location, process.env, {
    builtinComponents: builtinComponents(),
    mustExist: options.mustExist,
  });
  try {
    return await work(backend);
  } finally {
    await backend.close();
  }
}
