import { StoreError } from '../store-error.js';
import { excerptQuoted } from '../../common/log-text.js';
import {
  MAX_METADATA_KEY_LENGTH,
  MAX_METADATA_PER_OBJECT,
  MAX_METADATA_PER_WRITE,
  MAX_METADATA_VALUE_BYTES,
} from '../tables/metadata-input.js';
import type { ConfigMetadataItem } from '../types.js';
import type { ProjectSession } from './session.js';

/** Keboola still refuses a read-only token's metadata writes with its older role message. */
export const METADATA_WRITE_DENIED = 'Configuration manipulation is restricted for your user role';

/** A configuration's metadata: key/value items, set by key, deleted by id. */

export function addMetadata(
  s: ProjectSession,
  componentId: string,
  configId: string,
  metadata: Array<{ key: string; value: string }>,
): Promise<ConfigMetadataItem[]> {
  if (metadata.length === 0)
    return Promise.reject(StoreError.validation('Invalid parameters - metadata: This value should not be blank.'));
  const problem = boundsProblem(metadata);
  if (problem) return Promise.reject(StoreError.validation(`Invalid parameters - ${problem}`));
  return s.write(async (repo, now) => {
    const key = s.key(componentId, configId);
    await s.lockLiveConfig(repo, key);
    for (const item of metadata) {
      if (!item.key) throw StoreError.validation('Invalid parameters - metadata key: This value should not be blank.');
      await repo.upsertMetadata({
        ...key,
        id: await repo.nextSequence('metadata'),
        key: item.key,
        value: item.value,
        provider: 'user',
        timestamp: now,
      });
    }
    const list = await repo.listMetadata(key);
    // the transaction ends without a change
    if (list.length > MAX_METADATA_PER_OBJECT)
      throw StoreError.validation(
        `Invalid parameters - metadata: the configuration would hold ${list.length} metadata items, more than the ${MAX_METADATA_PER_OBJECT} one configuration may hold; delete some first. Nothing was changed.`,
      );
    return list;
  }, METADATA_WRITE_DENIED);
}

/**
 * The bounds of Storage metadata (store/tables/metadata-input.ts) on a configuration's: how many
 * items one call sets, how long a key and a value may be. Keys keep the characters Keboola
 * accepts for configurations (any text).
 */
function boundsProblem(metadata: ReadonlyArray<{ key: string; value: string }>): string | null {
  if (metadata.length > MAX_METADATA_PER_WRITE)
    return `metadata: ${metadata.length} items, more than the ${MAX_METADATA_PER_WRITE} one call may set.`;
  for (const [i, { key, value }] of metadata.entries()) {
    if (key.length > MAX_METADATA_KEY_LENGTH)
      return `metadata[${i}][key]: This value is too long (${key.length} characters). It should have ${MAX_METADATA_KEY_LENGTH} characters or less.`;
    if (value.length > MAX_METADATA_VALUE_BYTES / 3 && Buffer.byteLength(value, 'utf8') > MAX_METADATA_VALUE_BYTES)
      return `metadata[${i}][value]: This value is too long (${Buffer.byteLength(value, 'utf8')} bytes). It should have ${MAX_METADATA_VALUE_BYTES} bytes (UTF-8) or less.`;
  }
  return null;
}

export function listMetadata(s: ProjectSession, componentId: string, configId: string): Promise<ConfigMetadataItem[]> {
  return s.read(async (repo) => {
    const key = s.key(componentId, configId);
    await s.liveConfig(repo, key);
    return repo.listMetadata(key);
  });
}

export async function deleteMetadata(
  s: ProjectSession,
  componentId: string,
  configId: string,
  metadataId: string,
): Promise<void> {
  await s.write(async (repo) => {
    const key = s.key(componentId, configId);
    await s.lockLiveConfig(repo, key);
    // an id beyond 2^53 cannot exist (and would overflow PostgreSQL's bigint): not found
    if (
      !/^\d+$/.test(metadataId) ||
      !Number.isSafeInteger(Number(metadataId)) ||
      (await repo.deleteMetadata(key, Number(metadataId))) === 0
    ) {
      throw StoreError.notFound(
        `Metadata with id ${excerptQuoted(metadataId)} not found for ${excerptQuoted(componentId)} configuration ${excerptQuoted(configId)}`,
      );
    }
  });
}
