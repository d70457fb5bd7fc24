import { ConfigError } from '../../../common/errors.js';
import type { JsonValue } from '../../../json/index.js';
import { PHP_FUNCTIONS, phpEmpty, phpIntCast, phpJsonEncode } from '../../../php/index.js';
import { plural } from '../../../common/text.js';
import { describeValue, type PaginationOptions } from '../options.js';
import { Stop, type PageRequest, type Paginator, type ReceivedPage } from '../paginator.js';
import { StopCondition } from './stop-condition.js';

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
  throw new ConfigError(
    path,
    `must be whole seconds or a time span, got ${describeValue(value!)}`,
    'Write e.g. 3600 or "1 hour"',
  );
}

/**
 * `forceStop`: ends a job after `pages` requests, `time` seconds, or once the responses add up to
 * more than `volume` bytes (PHP `json_encode` length; the page crossing it was already written).
 * Checked in that order, each only when set.
 */
export class ForceStop extends StopCondition {
  private pageCounter = 0;
  private volumeCounter = 0;
  private startTime: number;

  constructor(
    inner: Paginator,
    readonly settings: ForceStopSettings,
    /** milliseconds since the epoch (tests pin it) */
    private readonly clock: () => number = Date.now,
  ) {
    super(inner);
    this.startTime = this.now();
  }

  protected label(): string {
    const { pages, time, volume } = this.settings;
    const limits = [
      pages === null ? '' : plural(pages, 'page'),
      time === null ? '' : `${time} s`,
      volume === null ? '' : plural(volume, 'byte'),
    ];
    return `forceStop (at most ${limits.filter(Boolean).join(', ') || 'no limit'})`;
  }

  /** Restarts the page count and the clock, not the volume (as GE). */
  protected override onFirst(): void {
    this.startTime = this.now();
    this.pageCounter = 1;
  }

  protected override onReset(): void {
    this.pageCounter = 0;
    this.volumeCounter = 0;
    this.startTime = this.now();
  }

  /** GE's short-circuit: the volume is only counted when neither pages nor time stopped. */
  protected stopFor(page: ReceivedPage): Stop | null {
    const { pages, time, volume } = this.settings;
    if (pages !== null && ++this.pageCounter > pages)
      return new Stop(`forceStop: ${plural(pages, 'page')} reached`, 'forceStop.pages');
    if (time !== null && this.startTime + time <= this.now())
      return new Stop(`forceStop: time limit of ${plural(time, 'second')} reached`, 'forceStop.time');
    if (volume !== null) {
      this.volumeCounter += phpJsonEncode(page.response).length;
      if (this.volumeCounter > volume) {
        return new Stop(
          `forceStop: ${plural(this.volumeCounter, 'byte')} received, over the volume limit of ${plural(volume, 'byte')}`,
          'forceStop.volume',
        );
      }
    }
    return null;
  }

  /** A page cap is absolute: nothing is fetched beyond it, not even speculatively. */
  override predict(job: PageRequest, count: number): PageRequest[] {
    const left = this.settings.pages === null ? count : Math.max(0, this.settings.pages - this.pageCounter);
    return super.predict(job, Math.min(count, left));
  }

  protected around(inner: Paginator): Paginator {
    return new ForceStop(inner, this.settings, this.clock);
  }

  private now(): number {
    return Math.floor(this.clock() / 1000);
  }
}
