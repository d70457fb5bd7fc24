import { fromPlain } from '../../../json/index.js';
import { cronTicks } from '../../../jobs/schedules/cron-tick.js';
import type { ScheduleView } from '../../schedules/schedules-backend.js';
import { fields } from '../../store-commands/store-command.js';

/** What `list` and `--json` show of a schedule: its definition, whether and when it fires next, its last job. */
export function scheduleFields(schedule: ScheduleView, now: Date) {
  const { definition } = schedule;
  const next =
    schedule.stopped === null && definition.state === 'enabled'
      ? (cronTicks(definition.cronTab, definition.timezone).nextAfter(now)?.toISOString() ?? null)
      : null;
  return fields({
    id: Number(schedule.id),
    configurationId: schedule.configurationId,
    cronTab: definition.cronTab,
    timezone: definition.timezone,
    state: schedule.stopped === null ? definition.state : 'stopped',
    stoppedBecause: schedule.stopped,
    target: fromPlain(definition.target),
    nextRun: next,
    lastJob: schedule.lastJob ? fields({ id: Number(schedule.lastJob.id), status: schedule.lastJob.status }) : null,
  });
}
