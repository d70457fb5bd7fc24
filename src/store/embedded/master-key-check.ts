import { UserError } from '../../common/errors.js';
import type { SecretCipher } from '../encryption.js';
import type { Repository } from './repository.js';

const SETTING = 'master_key_fingerprint';

/**
 * The store records a fingerprint of its master key on first use and refuses a process that
 * brings another key — e.g. a second `gex serve` on another machine that generated its own key
 * file — before it writes secrets that the other processes could not decrypt.
 */
export async function checkMasterKey(repo: Repository, cipher: SecretCipher, keySource: string): Promise<void> {
  await repo.initSetting(SETTING, cipher.fingerprint());
  if ((await repo.loadSetting(SETTING)) === cipher.fingerprint()) return;
  throw new UserError(
    'GEX_MASTER_KEY_INVALID',
    `The master key from ${keySource} is not the key of this store: its secrets were encrypted with another one. ` +
      'Give every gex process of the store the same key (GEX_MASTER_KEY, or the same key file via GEX_KEY_FILE).',
  );
}
