import type { Argv } from 'yargs';
import { printList } from '../../output/list-output.js';
import { displayId } from '../../../common/log-text.js';
import type { JsonValue } from '../../../json/index.js';
import { cronTicks } from '../../../jobs/schedules/cron-tick.js';
import type { ScheduleView } from '../../schedules/schedules-backend.js';
import { print, say } from '../../store-commands/store-command.js';
import { onSchedules, type SchedulesArgs } from './schedules-options.js';
import { scheduleFields } from './schedule-fields.js';

/** A schedule's cells in a list (piped, joined by two spaces). */
function cells(schedule: ScheduleView, now: Date): string[] {
  const row = scheduleFields(schedule, now);
  const get = (key: string): JsonValue | undefined => row.get(key);
  const { target, cronTab, timezone } = schedule.definition;
  const last = schedule.lastJob ? `job ${schedule.lastJob.id} ${schedule.lastJob.status}` : 'none';
  // one an older gex stored: the ticker skips it
  const never = cronTicks(cronTab, timezone).never;
  return [
    schedule.id,
    `${displayId(cronTab)} ${timezone}`,
    String(get('state')),
    `${displayId(target.componentId)} ${displayId(target.configurationId)}`,
    `next ${String(get('nextRun') ?? '-')}`,
    `last ${last}`,
    ...(schedule.stopped ? [`(stopped: ${schedule.stopped})`] : []),
    ...(never ? [`(${never}: fix its cron)`] : []),
  ];
}

/** `gex schedules list` */
export function schedulesListCommand(y: Argv<SchedulesArgs>): Argv<SchedulesArgs> {
  return y.command(
    'list',
    "List the project's schedules: cron, state, next run, last job",
    (c) => c,
    (args) =>
      onSchedules(args, async (schedules) => {
        const list = await schedules.list();
        const now = new Date();
        if (args.json) return print(list.map((s) => scheduleFields(s, now)));
        if (list.length === 0) return say('No schedules (gex schedules add CONFIG --cron …)');
        printList(
          ['ID', 'CRON', 'STATE', 'CONFIGURATION', 'NEXT RUN', 'LAST JOB', 'STOPPED'],
          list.map((schedule) => cells(schedule, now)),
          { separator: '  ' },
        );
      }),
  );
}
