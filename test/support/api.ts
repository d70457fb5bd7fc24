import { buildApiSettings, type ApiSettings } from '../../src/extractor/config/api-settings.js';
import { fromPlain, type JsonObject } from '../../src/json/index.js';

export function apiSettings(api: Record<string, unknown>, config: Record<string, unknown> = {}): ApiSettings {
  return buildApiSettings(fromPlain(api) as JsonObject, fromPlain(config) as JsonObject);
}
