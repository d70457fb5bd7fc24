import type { Argv } from 'yargs';
import { say } from '../../store-commands/store-command.js';
import { onSchedules, type SchedulesArgs } from './schedules-options.js';

/** `gex schedules remove <id>` */
export function schedulesRemoveCommand(y: Argv<SchedulesArgs>): Argv<SchedulesArgs> {
  return y.command(
    'remove <id>',
    'Delete a schedule and its keboola.scheduler configuration (jobs it created stay)',
    (c) => c.positional('id', { type: 'string', demandOption: true }),
    (args) =>
      onSchedules(args, async (schedules) => {
        await schedules.remove(args.id);
        say(`Schedule ${args.id} removed`);
      }),
  );
}
