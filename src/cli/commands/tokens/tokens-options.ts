import type { Argv } from 'yargs';
import type { EmbeddedBackend } from '../../../store/embedded/embedded-backend.js';
import { runCliAction } from '../../store-commands/command-runner.js';
import { withEmbeddedBackend } from '../../store-commands/embedded-only.js';

/** `--store`: the embedded store only. */
export const storeOption = <T>(c: Argv<T>) =>
  c.option('store', {
    type: 'string',
    describe:
      'the embedded store: a SQLite file or a postgres:// URL ($KBC_URL, else $GEX_STORE, else gex-store.sqlite)',
  }) as Argv<T & { store?: string }>;

const REFUSAL = 'Tokens live in the embedded store';

/** A tokens command's work on the embedded store `store` names (a remote store is refused). */
export function onTokens(
  store: string | undefined,
  work: (backend: EmbeddedBackend) => Promise<void>,
  options: { mustExist?: boolean } = {},
): Promise<void> {
  return runCliAction(() => withEmbeddedBackend(store, REFUSAL, work, options));
}
