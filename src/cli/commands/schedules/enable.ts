import type { Argv } from 'yargs';
import { setScheduleState, type SchedulesArgs } from './schedules-options.js';

/** `gex schedules enable <id>` */
export function schedulesEnableCommand(y: Argv<SchedulesArgs>): Argv<SchedulesArgs> {
  return y.command(
    'enable <id>',
    'Fire a schedule again (ticks while it was disabled are not made up)',
    (c) => c.positional('id', { type: 'string', demandOption: true }),
    (args) => setScheduleState(args, 'enabled'),
  );
}
