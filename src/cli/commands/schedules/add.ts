import type { Argv } from 'yargs';
import { displayId } from '../../../common/log-text.js';
import { fromPlain } from '../../../json/index.js';
import { cronTicks } from '../../../jobs/schedules/cron-tick.js';
import { scheduleConfiguration, scheduleDefinition } from '../../../jobs/schedules/schedule-definition.js';
import { GENERIC_EXTRACTOR_ID } from '../../builtin-components.js';
import { print, rowIdsOption, say } from '../../store-commands/store-command.js';
import { onSchedules, type SchedulesArgs } from './schedules-options.js';
import { scheduleFields } from './schedule-fields.js';

/** `gex schedules add <config-id>` */
export function schedulesAddCommand(y: Argv<SchedulesArgs>): Argv<SchedulesArgs> {
  return y.command(
    'add <config-id>',
    'Schedule a stored configuration: a keboola.scheduler configuration, activated',
    (c) =>
      rowIdsOption(
        c
          .positional('config-id', { type: 'string', demandOption: true })
          .option('cron', {
            type: 'string',
            demandOption: true,
            describe: 'cron expression: 5 fields (minute hour day month weekday) or 6 with seconds first',
          })
          .option('timezone', { type: 'string', default: 'UTC', describe: 'IANA time zone of the cron fields' })
          .option('component', {
            type: 'string',
            default: GENERIC_EXTRACTOR_ID,
            describe: 'component of the configuration',
          })
          .option('disabled', { type: 'boolean', default: false, describe: 'store it without firing it yet' }),
        'run only these rows',
      ),
    (args) =>
      onSchedules(args, async (schedules) => {
        // the schedule's own fields are checked before anything is stored or sent
        const definition = scheduleDefinition(
          fromPlain(
            scheduleConfiguration({
              cronTab: args.cron,
              timezone: args.timezone,
              state: args.disabled ? 'disabled' : 'enabled',
              target: {
                componentId: args.component,
                configurationId: args['config-id'],
                configurationRowIds: args['row-id'] ?? [],
                mode: 'run',
              },
            }),
          ),
        );
        const schedule = await schedules.add(definition, `Schedule of ${args['config-id']}`.slice(0, 256));
        const now = new Date();
        if (args.json) return print(scheduleFields(schedule, now));
        const next = cronTicks(definition.cronTab, definition.timezone).nextAfter(now);
        say(
          `Schedule ${schedule.id} added: ${displayId(definition.cronTab)} (${definition.timezone}) runs ${displayId(args.component)} ${displayId(args['config-id'])}` +
            (definition.state === 'enabled' ? `; next run ${next?.toISOString() ?? 'never'}` : '; disabled'),
        );
      }),
  );
}
