import type { Argv } from 'yargs';
import { setScheduleState, type SchedulesArgs } from './schedules-options.js';

/** `gex schedules disable <id>` */
export function schedulesDisableCommand(y: Argv<SchedulesArgs>): Argv<SchedulesArgs> {
  return y.command(
    'disable <id>',
    'Stop firing a schedule (kept; enable it again later)',
    (c) => c.positional('id', { type: 'string', demandOption: true }),
    (args) => setScheduleState(args, 'disabled'),
  );
}
