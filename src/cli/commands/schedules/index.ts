import type { Argv } from 'yargs';
import { storeOptions } from '../../options/store-options.js';
import { withSubCommands } from '../sub-commands.js';
import { schedulesAddCommand } from './add.js';
import { schedulesDisableCommand } from './disable.js';
import { schedulesEnableCommand } from './enable.js';
import { schedulesListCommand } from './list.js';
import { schedulesRemoveCommand } from './remove.js';

/**
 * `gex schedules add|list|enable|disable|remove`: configurations run on a cron (docs/jobs.md#schedules),
 * on the embedded store or through a server's Storage and Scheduler APIs.
 */
export function schedulesCommand(yargs: Argv): Argv {
  return yargs.command(
    'schedules <action>',
    'Run configurations on a cron: schedules fired by gex serve or gex worker (docs/jobs.md#schedules)',
    (y) =>
      withSubCommands(
        storeOptions(y)
          .option('json', { type: 'boolean', default: false, describe: 'print JSON' })
          .example("$0 schedules add shop --cron '0 * * * *'", 'run configuration shop every hour (UTC)')
          .example(
            "$0 schedules add shop --cron '30 6 * * 1-5' --timezone Europe/Prague",
            'weekdays at 6:30 in Prague',
          ),
        [
          schedulesAddCommand,
          schedulesListCommand,
          schedulesEnableCommand,
          schedulesDisableCommand,
          schedulesRemoveCommand,
        ],
      ).demandCommand(1, 'Name an action: add, list, enable, disable or remove'),
  );
}
