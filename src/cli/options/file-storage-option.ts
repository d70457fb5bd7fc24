import type { Options } from 'yargs';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import {
  parseObjectStoreUrl,
  S3ObjectStore,
  type ObjectStore,
  type ObjectStoreSettings,
} from '../../store/files/object-store.js';

/** `--file-storage s3://BUCKET[/PREFIX]` of gex serve and gex worker (docs/server.md#object-store-s3). */
export function fileStorageOption(): Options {
  return {
    type: 'string',
    defaultDescription: '$GEX_FILE_STORAGE or none (files in the store)',
    describe:
      "File Storage's bytes in an S3-compatible bucket: s3://BUCKET[/PREFIX], with the AWS SDK's settings (AWS_ENDPOINT_URL_S3, AWS_REGION, AWS_ACCESS_KEY_ID…); none: in the store's database",
  };
}

/**
 * The option, else $GEX_FILE_STORAGE, parsed with the AWS settings of `env` (checked before the
 * store is opened); undefined: files' bytes stay in the store's database.
 */
export function fileStorageSettings(
  option: string | undefined,
  env: NodeJS.ProcessEnv,
): ObjectStoreSettings | undefined {
  const value = option ?? env.GEX_FILE_STORAGE;
  // an empty --file-storage is refused by the option checks; an empty variable means none
  if (value === undefined || value === '') return undefined;
  return parseObjectStoreUrl(value, env);
}

/**
 * Opens and checks the bucket (reachable, the credentials accepted, writable: ObjectStore.check)
 * and has `backend` keep files' bytes in it. Throws the store's UserError (no secret) otherwise.
 */
export async function openFileStorage(backend: EmbeddedBackend, settings: ObjectStoreSettings): Promise<ObjectStore> {
  const objects = new S3ObjectStore(settings);
  try {
    await objects.check();
  } catch (error) {
    objects.close();
    throw error;
  }
  backend.storeFileBytesIn(objects);
  return objects;
}
