import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';
import { isJsonObject, JsonFloat, type JsonValue } from '../../json/index.js';
import { StoreError } from '../../store/store-error.js';

/** Keboola's events a project can subscribe to: a job's end or long run, and the same of a flow's phase. */
export const SUBSCRIPTION_EVENTS = [
  'job-failed',
  'job-succeeded',
  'job-succeeded-with-warning',
  'job-processing-long',
  'phase-job-failed',
  'phase-job-succeeded',
  'phase-job-succeeded-with-warning',
  'phase-job-processing-long',
] as const;
export type SubscriptionEvent = (typeof SUBSCRIPTION_EVENTS)[number];

export const FILTER_FIELDS = [
  'job.component.id',
  'job.configuration.id',
  'job.id',
  'branch.id',
  'phase.id',
  'durationOvertimePercentage',
] as const;
export const FILTER_OPERATORS = ['==', '<', '>', '<=', '>='] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** filters one subscription may hold, and the longest value of one */
export const MAX_FILTERS = 20;
export const MAX_FILTER_VALUE = 256;
/** longest webhook URL (bytes) and e-mail address */
export const MAX_URL_BYTES = 2048;
export const MAX_ADDRESS = 254;

export interface SubscriptionFilter {
  field: (typeof FILTER_FIELDS)[number];
  value: string | number | boolean;
  operator: FilterOperator;
}

export type Recipient = { channel: 'webhook'; url: string } | { channel: 'email'; address: string };

export interface SubscriptionInput {
  event: SubscriptionEvent;
  filters: SubscriptionFilter[];
  recipient: Recipient;
}

/** A refusal of the Notification API: 400 naming the field path and what to send instead. */
export function invalidSubscription(key: string, message: string): StoreError {
  return StoreError.keboola(KEBOOLA_ERRORS.notificationValidation, `Invalid request: ${key}: ${message}`, [
    { key, message },
  ]);
}

const list = (values: readonly string[]) => values.map((v) => `"${v}"`).join(', ');

// a local part without spaces, quotes or brackets; a domain of dot-separated labels (no IP literals)
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const ADDRESS = new RegExp(`^[A-Za-z0-9.!#$%&'*+/=?^_\`{|}~-]{1,64}@${LABEL}(?:\\.${LABEL})+$`);

/** A plain e-mail address (`ops@example.com`: no display name, comments or IP literals), at most MAX_ADDRESS characters. */
export function isEmailAddress(value: string): boolean {
  return value.length <= MAX_ADDRESS && ADDRESS.test(value);
}

function filterOf(value: JsonValue, at: string): SubscriptionFilter {
  if (!isJsonObject(value)) throw invalidSubscription(at, 'expected {"field": "…", "value": …, "operator": "=="}');
  const field = value.get('field');
  if (typeof field !== 'string' || !(FILTER_FIELDS as readonly string[]).includes(field))
    throw invalidSubscription(`${at}.field`, `expected one of ${list(FILTER_FIELDS)}`);
  const operator = value.get('operator') ?? '==';
  if (typeof operator !== 'string' || !(FILTER_OPERATORS as readonly string[]).includes(operator))
    throw invalidSubscription(`${at}.operator`, `expected one of ${list(FILTER_OPERATORS)} (default "==")`);
  const raw = value.get('value');
  // decoded JSON keeps floats (0.75) and big integers apart from numbers: they are numbers here
  const v = raw instanceof JsonFloat ? raw.value : typeof raw === 'bigint' ? Number(raw) : raw;
  if (typeof v === 'string') {
    if (v.length > MAX_FILTER_VALUE)
      throw invalidSubscription(`${at}.value`, `expected at most ${MAX_FILTER_VALUE} characters`);
  } else if (!(typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))))
    throw invalidSubscription(`${at}.value`, 'expected a string, a number or a boolean');
  if (operator !== '==' && typeof v !== 'number')
    throw invalidSubscription(`${at}.value`, `operator "${operator}" compares numbers: send a number`);
  return { field: field as SubscriptionFilter['field'], value: v, operator: operator as FilterOperator };
}

function webhookUrl(value: JsonValue | undefined): string {
  const at = 'recipient.url';
  if (typeof value !== 'string' || value === '') throw invalidSubscription(at, 'required: an http(s) URL');
  if (Buffer.byteLength(value) > MAX_URL_BYTES)
    throw invalidSubscription(at, `expected at most ${MAX_URL_BYTES} bytes (2 KB)`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidSubscription(at, 'expected an absolute http(s) URL such as https://hooks.example.com/gex');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidSubscription(at, 'expected an http:// or https:// URL');
  if (url.username !== '' || url.password !== '')
    throw invalidSubscription(
      at,
      'must not hold credentials (user:password@): they would be logged; check the signature header instead',
    );
  return value;
}

function recipientOf(value: JsonValue | undefined): Recipient {
  if (!isJsonObject(value))
    throw invalidSubscription(
      'recipient',
      'expected {"channel": "webhook", "url": "https://…"} or {"channel": "email", "address": "…"}',
    );
  const channel = value.get('channel');
  if (channel === 'webhook') return { channel, url: webhookUrl(value.get('url')) };
  if (channel === 'email') {
    const address = value.get('address');
    if (typeof address !== 'string' || !isEmailAddress(address))
      throw invalidSubscription('recipient.address', 'expected an e-mail address such as ops@example.com');
    return { channel, address };
  }
  throw invalidSubscription('recipient.channel', 'expected "webhook" or "email"');
}

/** A subscription as POSTed, checked: the first problem is refused naming its field path. */
export function subscriptionInput(body: JsonValue | undefined): SubscriptionInput {
  if (!isJsonObject(body))
    throw invalidSubscription('body', 'expected {"event": "job-failed", "filters": [], "recipient": {…}}');
  const event = body.get('event');
  if (typeof event !== 'string' || !(SUBSCRIPTION_EVENTS as readonly string[]).includes(event))
    throw invalidSubscription('event', `expected one of ${list(SUBSCRIPTION_EVENTS)}`);
  const filters = body.get('filters') ?? [];
  if (!Array.isArray(filters) || filters.length > MAX_FILTERS)
    throw invalidSubscription('filters', `expected a list of at most ${MAX_FILTERS} filters`);
  return {
    event: event as SubscriptionEvent,
    filters: filters.map((f, i) => filterOf(f, `filters[${i}]`)),
    recipient: recipientOf(body.get('recipient')),
  };
}

/** A webhook URL as answers and logs show it: every query value and any fragment hidden (a secret may be there). */
export function maskedUrl(url: string): string {
  const parsed = new URL(url);
  const query = parsed.search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0 ? '[hidden]' : `${pair.slice(0, eq)}=[hidden]`;
    });
  return `${parsed.origin}${parsed.pathname}${query.length ? `?${query.join('&')}` : ''}${parsed.hash ? '#[hidden]' : ''}`;
}
