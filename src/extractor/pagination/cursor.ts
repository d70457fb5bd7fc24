import { UserError } from '../../common/errors.js';
import { JsonFloat, type JsonValue } from '../../json/index.js';
import { getDataFromPath, isNumericString, phpJsonEncode } from '../../php/index.js';
import type { PaginationOptions } from './options.js';
import { stopAndReset, type PageRequest, type Paginator, type ReceivedPage, type Stop } from './paginator.js';

export interface CursorSettings {
  /** path of the id inside each record */
  idKey: string;
  /** the parameter that carries the cursor */
  param: string;
  /** follow the lowest id instead of the highest */
  reverse: boolean;
  increment: bigint;
}

export function cursorSettings(options: PaginationOptions): CursorSettings {
  return {
    idKey: options.required('idKey', 'Set the path of the id inside each record, e.g. "id"'),
    param: options.required('param', 'Set the request parameter that carries the cursor, e.g. "since_id"'),
    reverse: options.bool('reverse', false),
    increment: BigInt(options.integer('increment', 'Write the step as a whole number, e.g. 1 or -1') ?? 0),
  };
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * `cursor`: the first request is the job's own; then the highest id seen so far (lowest with
 * `reverse`) plus `increment` goes in `param`. The ids are read from the records after
 * `responseFilter`, kept across pages, and exact as int64 (ids often exceed 2^53).
 */
export class CursorPaginator implements Paginator {
  private max: bigint | null = null;
  private min: bigint | null = null;

  constructor(readonly settings: CursorSettings) {}

  describe(): string {
    const s = this.settings;
    const step = s.increment === 0n ? '' : ` ${s.increment > 0n ? '+' : ''}${s.increment}`;
    return `cursor (${s.param} = ${s.reverse ? 'lowest' : 'highest'} ${s.idKey}${step})`;
  }

  first(job: PageRequest): PageRequest {
    return job;
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    if (page.data.length === 0) return stopAndReset(this, 'cursor: empty page', 'emptyPage');
    for (const record of page.data) {
      const id = cursorId(getDataFromPath(record, this.settings.idKey) ?? null);
      if (this.max === null || id > this.max) this.max = id;
      if (this.min === null || id < this.min) this.min = id;
    }
    const cursor = (this.settings.reverse ? this.min! : this.max!) + this.settings.increment;
    // GE writes the cursor into the job's params (JobConfig::setParam): it stays for the whole job
    job.params.set(this.settings.param, jsonInteger(cursor));
    return { ...job, params: new Map(job.params) };
  }

  reset(): void {
    this.max = this.min = null;
  }

  clone(): Paginator {
    return new CursorPaginator(this.settings);
  }
}

/** An id as GE's `(int)` cast of a numeric value; anything else is the user error GE reports. */
function cursorId(value: JsonValue): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(value);
  if (value instanceof JsonFloat) return BigInt(Math.trunc(value.value));
  if (typeof value === 'string' && isNumericString(value)) {
    if (/^\s*[+-]?\d+$/.test(value)) {
      const n = BigInt(value.trim());
      return n > INT64_MAX ? INT64_MAX : n < INT64_MIN ? INT64_MIN : n; // PHP saturates integer strings
    }
    return BigInt(Math.trunc(Number(value)));
  }
  throw new UserError('GEX_API_RESPONSE_INVALID', `Cursor value '${phpJsonEncode(value)}' is not numeric.`);
}

function jsonInteger(n: bigint): number | bigint {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}
