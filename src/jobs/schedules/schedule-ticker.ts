import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from '../../common/logger.js';
import { displayId } from '../../common/log-text.js';
import type { ConfigStore } from '../../store/config-store.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import { StoreError } from '../../store/store-error.js';
import type { TokenInfo } from '../../store/types.js';
import type { QueueJob } from '../job-record.js';
import type { JobQueue } from '../job-queue.js';
import type { JobRepository } from '../job-repository.js';
import { newJob } from '../job-request.js';
import { cronTicks, type CronTicks } from './cron-tick.js';
import { DueQueue } from './due-queue.js';
import { scheduleJobTarget } from './schedule-activation.js';
import { ScheduleMirror } from './schedule-mirror.js';
import type { ScheduleRecord, ScheduleRepository } from './schedule-repository.js';

/** how often a ticker looks for changed schedules and due ticks */
export const TICK_CHECK_MS = 1000;
/** a tick first seen later than this after it fell is missed, not made up (unless its period is longer) */
const MIN_GRACE_MS = 5_000;
const MAX_GRACE_MS = 60_000;
/** missed ticks are counted up to this many (a yearly gap of a per-second schedule is not walked) */
const MISSED_COUNT_CAP = 10;
/** the longest the ticker works before it lets the event loop run (requests, other timers) */
const SLICE_MS = 10;

export interface ScheduleTickerOptions {
  schedules: ScheduleRepository;
  jobs: JobRepository;
  /** a token by id, of any project (a schedule fires on behalf of the token that activated it) */
  token(id: number): Promise<TokenInfo | undefined>;
  /** the configuration store a token sees (the target is checked in it as `POST /jobs` checks it) */
  storeOf(token: TokenInfo): ConfigStore;
  logger: Logger;
  /** a job was created (the pool may start it at once) */
  onJob?(job: QueueJob): void;
  /** counted by the job metrics: a tick this ticker fired (its job created), ticks it found missed */
  onFired?(): void;
  onMissed?(ticks: number): void;
  now?: () => Date;
  /** the ticks of a cron expression in a time zone (cronTicks; a test counts what is evaluated) */
  cron?: (expression: string, timeZone: string) => CronTicks;
  /** how long a check works before it lets the event loop run (default SLICE_MS; 0: after every schedule) */
  sliceMs?: number;
}

/** How long after a tick it may still be fired: its period, within 5 s to 60 s. */
export function graceOf(ticks: CronTicks, tick: Date): number {
  return graceBetween(tick, ticks.nextAfter(tick));
}

function graceBetween(tick: Date, next: Date | undefined): number {
  const period = next ? next.getTime() - tick.getTime() : MAX_GRACE_MS;
  return Math.min(MAX_GRACE_MS, Math.max(MIN_GRACE_MS, period));
}

/** A schedule this process knows, and the latest of its ticks it fired, saw fired or reported missed. */
interface Tracked {
  record: ScheduleRecord;
  /** its ticks while it fires (enabled, not stopped, a cron that fires) */
  ticks: CronTicks | undefined;
  seen: number;
  /** the tick it is queued for (epoch ms) */
  due: number | undefined;
}

/** Cron ticks shared by the schedules of one expression and zone (they share cronTicks' last answer). */
class SharedTicks {
  private readonly byKey = new Map<string, { ticks: CronTicks; users: number }>();

  constructor(private readonly parse: (expression: string, timeZone: string) => CronTicks) {}

  take(expression: string, timeZone: string): CronTicks {
    const key = `${expression}\u0000${timeZone}`;
    let shared = this.byKey.get(key);
    if (!shared) this.byKey.set(key, (shared = { ticks: this.parse(expression, timeZone), users: 0 }));
    shared.users++;
    return shared.ticks;
  }

  release(expression: string, timeZone: string): void {
    const key = `${expression}\u0000${timeZone}`;
    const shared = this.byKey.get(key);
    if (shared && --shared.users <= 0) this.byKey.delete(key);
  }
}

/**
 * Fires due schedule ticks: every process that runs jobs runs one (`gex serve` with workers,
 * `gex worker`), and the store makes each tick one job whichever process gets there first
 * (ScheduleRepository.fire). Only a schedule's latest tick is fired; ticks that fell while no
 * ticker ran are not made up, and the log says so once.
 *
 * Each schedule's next tick is computed once — when it is read, and when it fires — and kept in a
 * queue ordered by time: a second in which nothing is due costs one query (has any schedule
 * changed?) and a look at the queue's head, however many schedules there are. Work (loading
 * changed schedules, firing ticks that fall together) is done in slices of at most SLICE_MS,
 * letting the event loop run between them.
 */
export class ScheduleTicker {
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly tracked = new Map<number, Tracked>();
  private readonly due = new DueQueue<number>();
  private readonly mirror: ScheduleMirror;
  private readonly ticks: SharedTicks;
  private readonly now: () => Date;
  private sliceStart = 0;
  private closing = false;

  constructor(private readonly options: ScheduleTickerOptions) {
    this.now = options.now ?? (() => new Date());
    this.mirror = new ScheduleMirror(options.schedules);
    this.ticks = new SharedTicks(options.cron ?? cronTicks);
  }

  start(): void {
    this.timer = setInterval(() => void this.check(), TICK_CHECK_MS);
    this.timer.unref();
    void this.check();
  }

  /** Stops ticking; a check under way ends at its next slice. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.closing = true;
    await this.checking;
  }

  /** One look for changed schedules and due ticks (never two at once in a process). */
  check(): Promise<void> {
    this.checking ??= this.checkDue(this.now())
      .catch((error: unknown) => {
        if (!(error instanceof Closing)) this.options.logger.warn(`Schedules: ${(error as Error).message}`);
      })
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  /** Lets the event loop run when this turn has worked SLICE_MS; ends the check when the ticker stops. */
  private async pace(): Promise<void> {
    if (performance.now() - this.sliceStart >= (this.options.sliceMs ?? SLICE_MS)) {
      await nextTurn();
      this.sliceStart = performance.now();
    }
    if (this.closing) throw new Closing();
  }

  private async checkDue(now: Date): Promise<void> {
    this.sliceStart = performance.now();
    const first = !this.mirror.loaded;
    await this.mirror.refresh({
      changed: (records) => this.load(records),
      removed: (id) => this.forget(id),
    });
    if (first && this.mirror.loaded && this.tracked.size > 0) {
      const next = this.due.earliest();
      this.options.logger.info(
        `Schedules loaded: ${this.tracked.size} (${this.due.size} firing${next === undefined ? '' : `; the next tick ${new Date(next).toISOString()}`})`,
      );
    }
    const failed: Array<[number, number]> = [];
    for (let id = this.due.takeDue(now.getTime()); id !== undefined; id = this.due.takeDue(now.getTime())) {
      const schedule = this.tracked.get(id);
      if (!schedule?.ticks) continue;
      const due = schedule.due!;
      try {
        await this.onDue(schedule, schedule.ticks, due, now);
      } catch (error) {
        if (error instanceof Closing) throw error;
        // tried again at the next check (a tick whose time has passed by then is reported missed)
        failed.push([id, due]);
        this.options.logger.warn({ scheduleId: id }, `${label(schedule.record)}: ${(error as Error).message}`);
      }
      await this.pace();
    }
    for (const [id, due] of failed) if (this.tracked.get(id)?.ticks) this.due.set(id, due);
  }

  /** Takes in new and changed schedules: their ticks, the latest fired, their next tick. */
  private async load(records: ScheduleRecord[]): Promise<void> {
    const lastTicks = await this.options.schedules.lastTicks(records.map((r) => r.id));
    for (const record of records) {
      const known = this.tracked.get(record.id);
      const last = lastTicks.get(record.id);
      const seen = Math.max(
        known?.seen ?? -Infinity,
        last === undefined ? -Infinity : Date.parse(last),
        Date.parse(record.created) - 1,
      );
      // taken before the old ones are let go: an unchanged cron keeps its remembered answer
      const ticks = this.firingTicks(record);
      if (known?.ticks) this.ticks.release(known.record.definition.cronTab, known.record.definition.timezone);
      const schedule: Tracked = { record, ticks, seen, due: ticks?.nextAfter(new Date(seen))?.getTime() };
      this.tracked.set(record.id, schedule);
      this.due.set(record.id, schedule.due);
      await this.pace();
    }
  }

  /** A schedule's ticks when it fires; undefined (said in the log, once per change) when it cannot. */
  private firingTicks(record: ScheduleRecord): CronTicks | undefined {
    const { definition } = record;
    if (record.stopped !== null || definition.state !== 'enabled') return undefined;
    let ticks;
    try {
      ticks = this.ticks.take(definition.cronTab, definition.timezone);
    } catch (error) {
      this.options.logger.error(
        { scheduleId: record.id },
        `${label(record)} is skipped: its cron ${displayId(definition.cronTab)} (${displayId(definition.timezone)}) is not valid: ${(error as Error).message}; fix its configuration and activate it again`,
      );
      return undefined;
    }
    if (ticks.never === undefined) return ticks;
    this.ticks.release(definition.cronTab, definition.timezone);
    this.options.logger.error(
      { scheduleId: record.id },
      `${label(record)} is skipped: its cron ${displayId(definition.cronTab)} ${ticks.never}; fix its configuration and activate it again`,
    );
    return undefined;
  }

  private forget(id: number): void {
    const known = this.tracked.get(id);
    if (known?.ticks) this.ticks.release(known.record.definition.cronTab, known.record.definition.timezone);
    this.tracked.delete(id);
    this.due.set(id, undefined);
  }

  /**
   * A schedule whose next tick (`dueAt`) has come: fires its latest due tick, or reports missed
   * ones; queues the next. Only forward questions are asked of the cron (cron-parser's prev() costs
   * 10–50 ms): the next tick, and after a gap at most MISSED_COUNT_CAP more and those of the last minute.
   */
  private async onDue(schedule: Tracked, ticks: CronTicks, dueAt: number, now: Date): Promise<void> {
    const { record } = schedule;
    let due: Date | undefined = new Date(dueAt);
    // another process may have fired this tick (or later ones) already
    const last = await this.options.schedules.lastTick(record.id);
    if (last !== undefined && Date.parse(last) > schedule.seen) {
      schedule.seen = Date.parse(last);
      if (due.getTime() <= schedule.seen) due = ticks.nextAfter(new Date(schedule.seen));
      if (!due || due > now) return this.queue(schedule, due);
    }
    const fallen = ticksUpTo(ticks, due, now);
    const { latest, next } = fallen;
    if (!latest || now.getTime() - latest.getTime() > graceBetween(latest, next)) {
      this.reportMissed(record, { ...fallen, until: now, inclusive: true });
      schedule.seen = (latest ?? now).getTime();
      return this.queue(schedule, next);
    }
    // the latest tick is due; any between the first due and it fell while nothing ran
    if (latest.getTime() !== due.getTime()) this.reportMissed(record, { ...fallen, until: latest, inclusive: false });
    await this.fire(schedule, latest, now);
    this.queue(schedule, next);
  }

  private queue(schedule: Tracked, next: Date | undefined): void {
    // a schedule stopped or changed meanwhile is queued by its new record (or not at all)
    if (this.tracked.get(schedule.record.id) !== schedule || !schedule.ticks) return;
    if (next && next.getTime() <= schedule.seen) {
      this.options.logger.error(
        { scheduleId: schedule.record.id },
        `${label(schedule.record)} is skipped: cron-parser gave no tick after ${new Date(schedule.seen).toISOString()}`,
      );
      next = undefined;
    }
    schedule.due = next?.getTime();
    this.due.set(schedule.record.id, schedule.due);
  }

  /** Logs (once) the ticks from the first fallen one up to `until` (with it when `inclusive`) that were not fired. */
  private reportMissed(record: ScheduleRecord, missed: Fallen & { until: Date; inclusive: boolean }): void {
    const { first, until, inclusive } = missed;
    let which: string;
    if (missed.exact) {
      // the fallen ticks, without the one fired
      const count = inclusive ? missed.count : missed.count - 1;
      const lastMissed = inclusive ? missed.latest! : missed.beforeLatest!;
      which =
        count === 1
          ? `the tick of ${first.toISOString()} was`
          : `${count} ticks from ${first.toISOString()} to ${lastMissed.toISOString()} were`;
    } else {
      which = `more than ${MISSED_COUNT_CAP} ticks from ${first.toISOString()} until ${until.toISOString()} were`;
    }
    const next = inclusive ? missed.next : until;
    const missedTicks = missed.exact ? missed.count - (inclusive ? 0 : 1) : MISSED_COUNT_CAP + 1;
    this.options.onMissed?.(missedTicks);
    this.options.logger.warn(
      { scheduleId: record.id, missedTicks },
      `${label(record)}: ${which} missed (no worker ran, or the schedule was disabled); not made up${next ? `, next ${next.toISOString()}` : ''}`,
    );
  }

  private async fire(schedule: Tracked, tick: Date, now: Date): Promise<void> {
    const { logger, schedules, jobs } = this.options;
    const { record } = schedule;
    const token = await this.options.token(record.tokenId);
    if (!token) {
      await this.stopFiring(schedule, `the token ${record.tokenId} that activated it was deleted`);
      logger.error(
        { scheduleId: record.id },
        `${label(record)} stopped firing: the token ${record.tokenId} that activated it was deleted; activate it again with a valid token`,
      );
      return;
    }
    const { target } = record.definition;
    let job;
    try {
      job = await newJob(scheduleJobTarget(target), token, this.options.storeOf(token));
    } catch (error) {
      if (error instanceof StoreError && error.status < 500) {
        const reason = `its target can no longer run: ${error.message}`;
        await this.stopFiring(schedule, reason);
        logger.error({ scheduleId: record.id }, `${label(record)} stopped firing: ${reason}`);
        return;
      }
      throw error;
    }
    const created = await schedules.fire(record, tick, job, jobs, now);
    schedule.seen = tick.getTime();
    if (!created) return;
    this.options.onFired?.();
    logger.info(
      { scheduleId: record.id, jobId: created.id, tick: tick.toISOString() },
      `${label(record)} fired the tick of ${tick.toISOString()}: job ${created.id} (${displayId(target.componentId)} ${displayId(target.configurationId)})`,
    );
    this.options.onJob?.(created);
  }

  /** Stops a schedule in the store (every process then drops it) and here at once. */
  private async stopFiring(schedule: Tracked, reason: string): Promise<void> {
    await this.options.schedules.stop(schedule.record.id, reason);
    if (schedule.ticks) this.ticks.release(schedule.record.definition.cronTab, schedule.record.definition.timezone);
    schedule.ticks = undefined;
  }
}

/** The ticks that fell from a first due one up to now. */
interface Fallen {
  first: Date;
  /** the latest at or before now; undefined when there were too many to count and none in the last minute */
  latest: Date | undefined;
  /** the one before `latest` (exact counts only) */
  beforeLatest: Date | undefined;
  /** how many, `first` and `latest` included, when `exact` */
  count: number;
  exact: boolean;
  /** the first tick after now */
  next: Date | undefined;
}

/**
 * The ticks from `first` (at or before `now`) up to `now`, walked forward: counted up to
 * MISSED_COUNT_CAP; beyond, only those of the last minute are looked for (a tick older than that
 * is past any grace, so only its count was unknown).
 */
function ticksUpTo(ticks: CronTicks, first: Date, now: Date): Fallen {
  let latest = first;
  let beforeLatest: Date | undefined;
  let count = 1;
  let next = ticks.nextAfter(first);
  while (next && next <= now && count <= MISSED_COUNT_CAP) {
    beforeLatest = latest;
    latest = next;
    count++;
    next = ticks.nextAfter(next);
  }
  if (!next || next > now) return { first, latest, beforeLatest, count, exact: true, next };
  // too many to count: the last minute's ticks (a per-second cron has 60)
  let recent = ticks.nextAfter(new Date(Math.max(next.getTime() - 1, now.getTime() - MAX_GRACE_MS)));
  let found: Date | undefined;
  while (recent && recent <= now) {
    found = recent;
    recent = ticks.nextAfter(recent);
  }
  return { first, latest: found, beforeLatest: undefined, count, exact: false, next: recent };
}

/** The ticker was stopped during a check. */
class Closing extends Error {}

function label(record: ScheduleRecord): string {
  return `Schedule ${record.id} (${displayId(record.configurationId)})`;
}

/** The ticker of a process that serves or runs jobs of an embedded store (started; stop it before closing the store). */
export function startScheduleTicker(
  backend: EmbeddedBackend,
  queue: Pick<JobQueue, 'jobs' | 'schedules'>,
  logger: Logger,
  hooks: Pick<ScheduleTickerOptions, 'onJob' | 'onFired' | 'onMissed'> = {},
): ScheduleTicker {
  const ticker = new ScheduleTicker({
    schedules: queue.schedules,
    jobs: queue.jobs,
    token: (id) => backend.tokenById(id),
    storeOf: (token) => backend.session(token),
    logger,
    ...hooks,
  });
  ticker.start();
  return ticker;
}
