import { ConfigError } from '../../../common/errors.js';
import type { JsonValue } from '../../../json/index.js';
import {
  getDataFromPath,
  phpEmpty,
  phpGreaterOrEqual,
  phpIntCast,
  phpIsNumeric,
  phpJsonEncode,
} from '../../../php/index.js';
import { groupThousands, plural } from '../../../common/text.js';
import { describeValue, type PaginationOptions } from '../options.js';
import { Stop, type Paginator, type ReceivedPage } from '../paginator.js';
import { StopCondition } from './stop-condition.js';

/** Either a fixed number of records or the path of the total in each response. */
export type LimitStopSettings = { count: number; field?: undefined } | { field: string; count?: undefined };

export function limitStopSettings(options: PaginationOptions): LimitStopSettings {
  const field = options.raw.get('field');
  const count = options.raw.get('count');
  const fix = 'Set either "count": <number of records> or "field": "<path of the total in the response>"';
  if (phpEmpty(field) && phpEmpty(count)) throw new ConfigError(options.path, "needs one of 'field' or 'count'", fix);
  if (!phpEmpty(field) && !phpEmpty(count)) throw new ConfigError(options.path, "has both 'field' and 'count'", fix);
  if (phpEmpty(field)) return { count: phpIntCast(count) };
  if (typeof field !== 'string')
    throw new ConfigError(options.at('field'), `must be a string, got ${describeValue(field!)}`, fix);
  return { field };
}

/**
 * `limitStop`: counts the records of a job and stops once they reach the limit — `count`, or the
 * value at `field` in the current response. A missing field is null, and any count is >= null in
 * PHP, so such a job stops after its first page.
 */
export class LimitStop extends StopCondition {
  private total = 0;
  /** the limit the last page gave (`count`, or the value at `field`) */
  private limit: JsonValue | undefined;

  constructor(
    inner: Paginator,
    readonly settings: LimitStopSettings,
  ) {
    super(inner);
  }

  protected label(): string {
    const limit =
      this.settings.field === undefined
        ? plural(this.settings.count, 'record')
        : `the records given by ${this.settings.field}`;
    return `limitStop (at most ${limit})`;
  }

  protected override onFirst(): void {
    this.total = 0;
    this.limit = undefined;
  }

  protected override onReset(): void {
    this.total = 0;
    this.limit = undefined;
  }

  /** The job ends at the limit (or earlier, when pages run out): the best total there is for an ETA. */
  override expectedRecords(): number | undefined {
    const limit = this.settings.field === undefined ? this.settings.count : this.limit;
    const inner = super.expectedRecords();
    if (limit === undefined || !phpIsNumeric(limit)) return inner;
    // a total the method knows (totalPath) may end the job before the limit
    const own = Math.max(0, phpIntCast(limit));
    return inner === undefined ? own : Math.min(own, inner);
  }

  protected stopFor(page: ReceivedPage): Stop | null {
    this.total += page.data.length;
    const { field, count } = this.settings;
    const limit = field === undefined ? count : (getDataFromPath(page.response, field) ?? null);
    this.limit = limit;
    if (!phpGreaterOrEqual(this.total, limit)) return null;
    if (field === undefined)
      return new Stop(`limitStop: ${groupThousands(this.total)} of ${plural(count, 'record')}`, 'limitStop.count');
    if (limit === null)
      return new Stop(
        `limitStop: ${field} is not in the response (${plural(this.total, 'record')} so far)`,
        'limitStop.field',
      );
    return new Stop(
      `limitStop: ${groupThousands(this.total)} of ${phpJsonEncode(limit)} records (${field})`,
      'limitStop.field',
    );
  }

  protected around(inner: Paginator): Paginator {
    return new LimitStop(inner, this.settings);
  }
}
