import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { isJsonObject } from '../../json/index.js';
import { tokenMissing, type TokenOrigin } from '../token-refusal.js';
import { INTERACTIVE_STORE_RETRY, retrySettingsFromEnv } from './retry-budget.js';
import { StorageApiClient } from './storage-api-client.js';

/** The token a call sends, and where it came from (named when a server refuses it). */
export interface GivenToken {
  token?: string;
  tokenOrigin?: TokenOrigin;
}

/** An API index larger than this is refused, not held in memory. */
const MAX_INDEX_BYTES = 1024 * 1024;

/**
 * A service of a Storage API (the Job Queue, the Scheduler), found as Keboola's clients find it:
 * its entry in `services` of the API index. Returns a client of the Storage API and one of the
 * service, both with the token, error mapping, retries and size limits of StorageApiClient.
 */
export async function openService(
  url: string,
  given: GivenToken,
  env: NodeJS.ProcessEnv,
  wanted: { id: string; name: string },
  logger?: Logger,
): Promise<{ storage: StorageApiClient; service: StorageApiClient }> {
  const { token, tokenOrigin } = given;
  if (!token) throw tokenMissing(`the Storage API at ${url}`);
  // a person is waiting: a server that does not answer fails within seconds, not minutes
  const retry = retrySettingsFromEnv(INTERACTIVE_STORE_RETRY, env);
  const storage = new StorageApiClient({ url, token, tokenOrigin, retry, logger });
  const index = await storage.call(
    'GET',
    '',
    undefined,
    { exclude: 'components' },
    { maxBytes: MAX_INDEX_BYTES, tooLargeHint: 'far more than an API index takes: not read' },
  );
  const services = isJsonObject(index) ? index.get('services') : undefined;
  const entry = Array.isArray(services)
    ? services.find((s) => isJsonObject(s) && s.get('id') === wanted.id && typeof s.get('url') === 'string')
    : undefined;
  if (!isJsonObject(entry))
    throw new UserError(
      'GEX_STORAGE_API_REFUSED',
      `The Storage API at ${url} lists no ${wanted.name} in its index (services: ${wanted.id}); a gex serve lists its own.`,
    );
  const service = new StorageApiClient({
    url: serviceAddress(url, String(entry.get('url')), wanted.name),
    token,
    tokenOrigin,
    retry,
    logger,
    service: { name: wanted.name, path: '' },
  });
  return { storage, service };
}

/** A service's address from the index: http(s) only, and not plain http behind an https Storage API. */
function serviceAddress(storageUrl: string, text: string, name: string): string {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    parsed = new URL('invalid:');
  }
  const downgrade = parsed.protocol === 'http:' && new URL(storageUrl).protocol === 'https:';
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || downgrade || parsed.username || parsed.password)
    throw new UserError(
      'GEX_STORAGE_API_REFUSED',
      `The Storage API at ${storageUrl} names as its ${name} ${JSON.stringify(text.slice(0, 200))}: not an http(s) address gex sends the token to.`,
    );
  return parsed.toString().replace(/\/+$/, '');
}
