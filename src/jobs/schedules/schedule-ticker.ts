import type { Logger } from '../../common/logger.js';
import { displayId } from '../../common/log-text.js';
import { fromPlain } from '../../json/index.js';
import type { ConfigStore } from '../../store/config-store.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import { StoreError } from '../../store/store-error.js';
import type { TokenInfo } from '../../store/types.js';
import type { QueueJob } from '../job-record.js';
import type { JobRepository } from '../job-repository.js';
import { newJobFromRequest } from '../job-request.js';
import { cronTicks, type CronTicks } from './cron-tick.js';
import type { ScheduleRecord, ScheduleRepository } from './schedule-repository.js';

/** how often a ticker looks for due ticks */
export const TICK_CHECK_MS = 1000;
/** a tick first seen later than this after it fell is missed, not made up (unless its period is longer) */
const MIN_GRACE_MS = 5_000;
const MAX_GRACE_MS = 60_000;
/** missed ticks are counted up to this many (a yearly gap of a per-second schedule is not walked) */
const MISSED_COUNT_CAP = 1_000;

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
  now?: () => Date;
}

/** How long after a tick it may still be fired: its period, within 5 s to 60 s. */
export function graceOf(ticks: CronTicks, tick: Date): number {
  const next = ticks.nextAfter(tick);
  const period = next ? next.getTime() - tick.getTime() : MAX_GRACE_MS;
  return Math.min(MAX_GRACE_MS, Math.max(MIN_GRACE_MS, period));
}

/**
 * Fires due schedule ticks: every process that runs jobs runs one (`gex serve` with workers,
 * `gex worker`), and the store makes each tick one job whichever process gets there first
 * (ScheduleRepository.fire). Only a schedule's latest tick is fired; ticks that fell while no
 * ticker ran are not made up, and the log says so once.
 */
export class ScheduleTicker {
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  /** per schedule: the latest tick this process fired, saw fired or reported missed */
  private readonly seen = new Map<number, number>();
  private readonly parsed = new Map<number, { key: string; ticks: CronTicks }>();
  private readonly now: () => Date;

  constructor(private readonly options: ScheduleTickerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    this.timer = setInterval(() => void this.check(), TICK_CHECK_MS);
    this.timer.unref();
    void this.check();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.checking;
  }

  /** One look at every firing schedule (never two at once in a process). */
  check(): Promise<void> {
    this.checking ??= this.checkAll(this.now())
      .catch((error: unknown) => this.options.logger.warn(`Schedules: ${(error as Error).message}`))
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  private ticksOf(schedule: ScheduleRecord): CronTicks {
    const key = `${schedule.definition.cronTab}\u0000${schedule.definition.timezone}`;
    const known = this.parsed.get(schedule.id);
    if (known?.key === key) return known.ticks;
    const ticks = cronTicks(schedule.definition.cronTab, schedule.definition.timezone);
    this.parsed.set(schedule.id, { key, ticks });
    return ticks;
  }

  private async checkAll(now: Date): Promise<void> {
    const schedules = (await this.options.schedules.firing()).filter((s) => s.definition.state === 'enabled');
    for (const schedule of schedules) {
      const ticks = this.ticksOf(schedule);
      const tick = ticks.latestAtOrBefore(now);
      if (!tick) continue;
      let seen = this.seen.get(schedule.id);
      if (seen === undefined || seen < tick.getTime()) {
        const last = await this.options.schedules.lastTick(schedule.id);
        seen = Math.max(
          seen ?? -Infinity,
          last === undefined ? -Infinity : Date.parse(last),
          schedule.created ? Date.parse(schedule.created) - 1 : -Infinity,
        );
        this.seen.set(schedule.id, seen);
      }
      if (seen >= tick.getTime()) continue;
      if (now.getTime() - tick.getTime() > graceOf(ticks, tick)) {
        this.seen.set(schedule.id, tick.getTime());
        this.reportMissed(schedule, ticks, seen, tick, true);
        continue;
      }
      // the latest tick is due; any between it and the last one seen fell while nothing ran
      this.reportMissed(schedule, ticks, seen, tick, false);
      await this.fire(schedule, tick, await this.options.token(schedule.tokenId), now);
    }
    // forget schedules that are gone
    const ids = new Set(schedules.map((s) => s.id));
    for (const id of this.seen.keys()) if (!ids.has(id)) this.seen.delete(id);
  }

  /** Logs (once) the ticks after `seen` up to `until` (with it when `inclusive`) that were not fired. */
  private reportMissed(
    schedule: ScheduleRecord,
    ticks: CronTicks,
    seen: number,
    until: Date,
    inclusive: boolean,
  ): void {
    let count = 0;
    let first: Date | undefined;
    let last: Date | undefined;
    for (
      let t = ticks.nextAfter(new Date(seen));
      t && (t < until || (inclusive && t.getTime() === until.getTime())) && count < MISSED_COUNT_CAP;
      t = ticks.nextAfter(t)
    ) {
      first ??= t;
      last = t;
      count++;
    }
    if (!first || !last) return;
    const next = ticks.nextAfter(inclusive ? until : new Date(until.getTime() - 1));
    const which =
      count === 1
        ? `the tick of ${first.toISOString()} was`
        : `${count >= MISSED_COUNT_CAP ? 'at least ' : ''}${count} ticks from ${first.toISOString()} to ${last.toISOString()} were`;
    this.options.logger.warn(
      { scheduleId: schedule.id, missedTicks: count },
      `Schedule ${schedule.id} (${displayId(schedule.configurationId)}): ${which} missed (no worker ran, or the schedule was disabled); not made up${next ? `, next ${next.toISOString()}` : ''}`,
    );
  }

  private async fire(schedule: ScheduleRecord, tick: Date, token: TokenInfo | undefined, now: Date): Promise<void> {
    const { logger, schedules, jobs } = this.options;
    const label = `Schedule ${schedule.id} (${displayId(schedule.configurationId)})`;
    if (!token) {
      await schedules.stop(schedule.id, `the token ${schedule.tokenId} that activated it was deleted`);
      logger.error(
        { scheduleId: schedule.id },
        `${label} stopped firing: the token ${schedule.tokenId} that activated it was deleted; activate it again with a valid token`,
      );
      return;
    }
    const { target } = schedule.definition;
    let job;
    try {
      job = await newJobFromRequest(
        fromPlain({
          component: target.componentId,
          config: target.configurationId,
          configRowIds: target.configurationRowIds,
          mode: target.mode,
        }),
        undefined,
        token,
        this.options.storeOf(token),
      );
    } catch (error) {
      if (error instanceof StoreError && error.status < 500) {
        const reason = `its target can no longer run: ${error.message}`;
        await schedules.stop(schedule.id, reason);
        logger.error({ scheduleId: schedule.id }, `${label} stopped firing: ${reason}`);
        return;
      }
      throw error;
    }
    const created = await schedules.fire(schedule, tick, job, jobs, now);
    this.seen.set(schedule.id, tick.getTime());
    if (!created) return;
    logger.info(
      { scheduleId: schedule.id, jobId: created.id, tick: tick.toISOString() },
      `${label} fired the tick of ${tick.toISOString()}: job ${created.id} (${displayId(target.componentId)} ${displayId(target.configurationId)})`,
    );
    this.options.onJob?.(created);
  }
}

/** The ticker of a process that serves or runs jobs of an embedded store (started; stop it before closing the store). */
export function startScheduleTicker(
  backend: EmbeddedBackend,
  jobs: JobRepository,
  logger: Logger,
  onJob?: (job: QueueJob) => void,
): ScheduleTicker {
  const ticker = new ScheduleTicker({
    schedules: backend.schedules(),
    jobs,
    token: (id) => backend.tokenById(id),
    storeOf: (token) => backend.session(token),
    logger,
    onJob,
  });
  ticker.start();
  return ticker;
}
