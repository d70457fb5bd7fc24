import { UserError } from '../../common/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import { buildUrl, phpEmpty, phpToString } from '../../php/index.js';
import type { JobConfig } from './job-config.js';

interface AllowedHost {
  host: string;
  scheme?: string;
  port?: string;
  endpoint?: string;
}

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

function parseEntries(value: JsonValue | undefined): AllowedHost[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isJsonObject).map((entry: JsonObject) => {
    const get = (k: string) => (phpEmpty(entry.get(k)) ? undefined : phpToString(entry.get(k)));
    return { host: get('host') ?? '', scheme: get('scheme'), port: get('port'), endpoint: get('endpoint') };
  });
}

function matches(url: URL, entry: AllowedHost): boolean {
  if (url.hostname !== entry.host) return false;
  if (entry.scheme && url.protocol !== `${entry.scheme}:`) return false;
  if (entry.port && (url.port || DEFAULT_PORT[url.protocol]) !== entry.port) return false;
  if (entry.endpoint) {
    const prefix = `/${entry.endpoint.replace(/^\/+|\/+$/g, '')}`;
    if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return false;
  }
  return true;
}

/**
 * The `image_parameters.allowed_hosts` whitelist as a test of one URL, or null when none is set.
 * The HTTP client applies it to every request and every redirect hop: a whitelisted API must not be
 * able to send the extractor (and what it carries) to a host the whitelist does not name.
 */
export function allowedHostsRule(imageParameters: JsonObject): ((url: URL) => boolean) | null {
  const entries = parseEntries(imageParameters.get('allowed_hosts'));
  if (entries.length === 0) return null;
  return (url) => entries.some((entry) => matches(url, entry));
}

/**
 * `image_parameters.allowed_hosts`: when set, every top-level job URL (base URL + endpoint, joined
 * naively as GE checks it) must match an entry `{host, scheme?, port?, endpoint?}` before any
 * request is sent, as GE checks it. GE stops there; gex also checks every request it sends, child
 * and next-page URLs and redirects included (see allowedHostsRule).
 */
export function checkAllowedHosts(imageParameters: JsonObject, baseUrl: string, jobs: JobConfig[]): void {
  const entries = parseEntries(imageParameters.get('allowed_hosts'));
  if (entries.length === 0) return;
  for (const job of jobs) {
    const target = /^[a-z][a-z0-9+.-]*:\/\//i.test(job.endpoint)
      ? job.endpoint
      : `${baseUrl.replace(/\/+$/, '')}/${job.endpoint.replace(/^\/+/, '')}`;
    const text = job.method === 'GET' ? buildUrl(target, job.params) : target;
    let url: URL | null = null;
    try {
      url = new URL(text);
    } catch {
      url = null;
    }
    if (!url || !entries.some((entry) => matches(url!, entry))) {
      throw new UserError(`URL "${text}" is not in the allowed hosts whitelist (image_parameters.allowed_hosts).`);
    }
  }
}
