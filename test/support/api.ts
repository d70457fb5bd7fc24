import { buildApiSettings, type ApiSettings } from '../../src/extractor/config/api-settings.js';
import { fromPlain, type JsonObject } from '../../src/php-compat/index.js';

export function apiSettings(api: Record<string, unknown>, config: Record<string, unknown> = {}): ApiSettings {
  return buildApiSettings(fromPlain(api) as JsonObject, fromPlain(config) as JsonObject);
}
