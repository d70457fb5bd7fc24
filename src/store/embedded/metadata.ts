import { StoreError } from '../store-error.js';
import { excerptQuoted } from '../../common/log-text.js';
import type { MetadataItem } from '../types.js';
import type { ProjectSession } from './session.js';

/** Keboola still refuses a read-only token's metadata writes with its older role message. */
export const METADATA_WRITE_DENIED = 'Configuration manipulation is restricted for your user role';

/** A configuration's metadata: key/value items, set by key, deleted by id. */

export function addMetadata(
  s: ProjectSession,
  componentId: string,
  configId: string,
  metadata: Array<{ key: string; value: string }>,
): Promise<MetadataItem[]> {
  if (metadata.length === 0)
    return Promise.reject(StoreError.validation('Invalid parameters - metadata: This value should not be blank.'));
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
    return repo.listMetadata(key);
  }, METADATA_WRITE_DENIED);
}

export function listMetadata(s: ProjectSession, componentId: string, configId: string): Promise<MetadataItem[]> {
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
