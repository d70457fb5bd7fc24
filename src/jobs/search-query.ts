import { StoreError } from '../store/store-error.js';
import { excerptQuoted } from '../common/log-text.js';
import { parseChangedSince } from '../store/tables/index.js';
import { UserError } from '../common/errors.js';
import type { JobMode } from './job-record.js';
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SORT_COLUMNS, type JobSearch, type JobSortKey } from './job-search.js';
import { isJobStatus, type JobStatus } from './statuses.js';
import { KEBOOLA_ERRORS } from '../common/keboola-errors.js';

export type QueryParams = Record<string, string | string[] | undefined>;

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z */
const FIRST_MS = -62_167_219_200_000;
const LAST_MS = 253_402_300_799_999;
/** values of one list parameter (any of `names`) */
const MAX_LIST_VALUES = 1000;

function invalid(key: string, message: string): StoreError {
  return new StoreError(400, KEBOOLA_ERRORS.queueValidation.code, `Invalid search: ${key}: ${message}`, [
    { key, message },
  ]);
}

/**
 * Every value of a list parameter as clients encode it: `x=a`, repeated `x=a&x=b`, `x[]=a` and
 * `x[0]=a` (PHP's http_build_query), under any of its names (`component` / `componentId`).
 * Undefined when none of them is present.
 */
export function listParam(query: QueryParams, names: readonly string[]): string[] | undefined {
  let found: string[] | undefined;
  for (const [key, value] of Object.entries(query)) {
    const base = /^([A-Za-z]+)(?:\[\d{0,9}\])?$/.exec(key)?.[1];
    if (base === undefined || !names.includes(base) || value === undefined) continue;
    found = [...(found ?? []), ...(Array.isArray(value) ? value : [value])];
  }
  if (found && found.length > MAX_LIST_VALUES) throw invalid(names[0], `at most ${MAX_LIST_VALUES} values`);
  // PHP's client leaves unset lists out; an empty value is "no filter", as Keboola reads it
  const values = found?.filter((v) => v !== '');
  return values && values.length > 0 ? values : undefined;
}

function scalar(query: QueryParams, name: string): string | undefined {
  const value = query[name];
  return Array.isArray(value) ? value[0] : value;
}

function count(query: QueryParams, name: string): number | undefined {
  const text = scalar(query, name)?.trim();
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,15}$/.test(text)) throw invalid(name, `expected a whole number ≥ 0, got ${excerptQuoted(text)}`);
  return Number(text);
}

function ids(query: QueryParams, names: readonly string[]): number[] | undefined {
  const values = listParam(query, names);
  if (values === undefined) return undefined;
  // a text that is no id matches no job
  return values.filter((v) => /^\d{1,15}$/.test(v)).map(Number);
}

/** An ISO 8601 UTC bound for a time filter; relative moments (`-8 hours`) count back from `now`. */
function moment(query: QueryParams, name: string, now: Date): string | undefined {
  const text = scalar(query, name);
  if (text === undefined || text === '') return undefined;
  let date: Date;
  try {
    date = parseChangedSince(text, now, name);
  } catch (error) {
    if (error instanceof UserError) throw invalid(name, error.message);
    throw error;
  }
  // stored times are toISOString text of years 0000-9999: a bound beyond them is clamped to their ends
  const ms = Math.min(Math.max(date.getTime(), FIRST_MS), LAST_MS);
  return new Date(ms).toISOString();
}

/** `GET /search/jobs` parameters → a search; anything unparsable is a 400 naming the parameter. */
export function searchFromQuery(query: QueryParams, now = new Date()): JobSearch {
  const statuses = listParam(query, ['status']);
  const unknownStatus = statuses?.find((s) => !isJobStatus(s));
  if (unknownStatus !== undefined) throw invalid('status', `unknown status ${excerptQuoted(unknownStatus)}`);
  const modes = listParam(query, ['mode']);
  const limit = count(query, 'limit') ?? DEFAULT_SEARCH_LIMIT;
  if (limit > MAX_SEARCH_LIMIT) throw invalid('limit', `at most ${MAX_SEARCH_LIMIT}`);
  const sortBy = scalar(query, 'sortBy') || 'id';
  if (!Object.hasOwn(SORT_COLUMNS, sortBy)) throw invalid('sortBy', `one of ${Object.keys(SORT_COLUMNS).join(', ')}`);
  const sortOrder = (scalar(query, 'sortOrder') || 'desc').toLowerCase();
  if (sortOrder !== 'asc' && sortOrder !== 'desc') throw invalid('sortOrder', 'asc or desc');
  const type = scalar(query, 'type');
  const duration = (name: string) => count(query, name);
  return {
    ids: ids(query, ['id']),
    runIds: listParam(query, ['runId']),
    branchIds: listParam(query, ['branchId'])?.map((b) => (b === 'default' ? '1' : b)),
    tokenIds: ids(query, ['tokenId']),
    tokenDescriptions: listParam(query, ['tokenDescription']),
    componentIds: listParam(query, ['component', 'componentId']),
    configIds: listParam(query, ['config', 'configId']),
    configRowIds: listParam(query, ['configRowIds', 'configRowId']),
    modes: modes as JobMode[] | undefined,
    statuses: statuses as JobStatus[] | undefined,
    parentRunId: scalar(query, 'parentRunId'),
    createdFrom: moment(query, 'createdTimeFrom', now),
    createdTo: moment(query, 'createdTimeTo', now),
    startedFrom: moment(query, 'startTimeFrom', now),
    startedTo: moment(query, 'startTimeTo', now),
    endedFrom: moment(query, 'endTimeFrom', now),
    endedTo: moment(query, 'endTimeTo', now),
    durationFrom: duration('durationSecondsFrom'),
    durationTo: duration('durationSecondsTo'),
    types: type === undefined || type === '' ? undefined : [type],
    limit,
    offset: count(query, 'offset') ?? 0,
    sortBy: sortBy as JobSortKey,
    sortOrder,
  };
}
