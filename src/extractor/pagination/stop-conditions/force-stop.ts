import { ConfigError } from '../../../common/errors.js';
import type { JsonValue } from '../../../json/index.js';
import { PHP_FUNCTIONS, phpEmpty, phpIntCast, phpJsonEncode } from '../../../php/index.js';
import { plural } from '../../../common/text.js';
import { describeValue, type PaginationOptions } from '../options.js';
import { Stop, type PageRequest, type Paginator, type ReceivedPage } from '../paginator.js';

export interface ForceStopSettings {
  /** at most this many requests per job */
  pages: number | null;
  /** seconds since the job's first request */
  time: number | null;
  /** bytes of JSON-encoded responses */
  volume: number | null;
}

export function forceStopSettings(options: PaginationOptions): ForceStopSettings {
  const pages = options.integer('pages', 'Write the number of pages without quotes, e.g. 10');
  return {
    pages: pages === null ? null : Number(pages),
    time: timeLimit(options.raw.get('time'), options.at('time')),
    volume: phpEmpty(options.raw.get('volume')) ? null : phpIntCast(options.raw.get('volume')),
  };
}

/**
 * GE: an integer is seconds; a string is PHP `strtotime(time, 0)`, so "1 hour" is 3600 — and an
 * unparsable string is 0, which stops every job after its first page.
 */
function timeLimit(value: JsonValue | undefined, path: string): number | null {
  if (phpEmpty(value)) return null;
  if ((typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') return phpIntCast(PHP_FUNCTIONS.strtotime([value, 0]));
  throw new ConfigError(path, `must be whole seconds or a time span, got ${describeValue(value!)}`, 'Write e.g. 3600 or "1 hour"');
}

/**
 * `forceStop`: ends a job after `pages` requests, `time` seconds, or once the responses add up to
 * more than `volume` bytes (PHP `json_encode` length; the page crossing it was already written).
 * Checked in that order, each only when set.
 */
export class ForceStop implements Paginator {
  private pageCounter = 0;
  private volumeCounter = 0;
  private startTime: number;

  constructor(
    private readonly inner: Paginator,
    readonly settings: ForceStopSettings,
    /** milliseconds since the epoch (tests pin it) */
    private readonly clock: () => number = Date.now,
  ) {
    this.startTime = this.now();
  }

  describe(job: PageRequest): string {
    const { pages, time, volume } = this.settings;
    const limits = [pages === null ? '' : plural(pages, 'page'), time === null ? '' : `${time} s`, volume === null ? '' : plural(volume, 'byte')];
    return `${this.inner.describe(job)}; forceStop (at most ${limits.filter(Boolean).join(', ') || 'no limit'})`;
  }

  /** Restarts the page count and the clock, not the volume (as GE). */
  first(job: PageRequest): PageRequest {
    this.startTime = this.now();
    this.pageCounter = 1;
    return this.inner.first(job);
  }

  next(job: PageRequest, page: ReceivedPage): PageRequest | Stop {
    const reason = this.limitReached(page.response);
    return reason ? new Stop(reason) : this.inner.next(job, page);
  }

  /** GE's short-circuit: the volume is only counted when neither pages nor time stopped. */
  private limitReached(response: JsonValue): string | null {
    const { pages, time, volume } = this.settings;
    if (pages !== null && ++this.pageCounter > pages) return `forceStop: ${plural(pages, 'page')} reached`;
    if (time !== null && this.startTime + time <= this.now()) return `forceStop: time limit of ${plural(time, 'second')} reached`;
    if (volume !== null) {
      this.volumeCounter += phpJsonEncode(response).length;
      if (this.volumeCounter > volume) return `forceStop: ${plural(this.volumeCounter, 'byte')} received, over the volume limit of ${plural(volume, 'byte')}`;
    }
    return null;
  }

  /** A page cap is absolute: nothing is fetched beyond it, not even speculatively. */
  predict(job: PageRequest, count: number): PageRequest[] {
    const left = this.settings.pages === null ? count : Math.max(0, this.settings.pages - this.pageCounter);
    return this.inner.predict?.(job, Math.min(count, left)) ?? [];
  }

  reset(): void {
    this.pageCounter = 0;
    this.volumeCounter = 0;
    this.startTime = this.now();
    this.inner.reset();
  }

  clone(): Paginator {
    return new ForceStop(this.inner.clone(), this.settings, this.clock);
  }

  private now(): number {
    return Math.floor(this.clock() / 1000);
  }
}
