import { runCliAction } from '../../store-commands/command-runner.js';
import { EmbeddedSchedules } from '../../schedules/embedded-schedules.js';
import { RemoteSchedules } from '../../schedules/remote-schedules.js';
import type { SchedulesBackend } from '../../schedules/schedules-backend.js';
import { print, say } from '../../store-commands/store-command.js';
import { openStoreFromArgs, tokenFromArgs, type StoreArgs } from '../../options/store-options.js';
import { scheduleFields } from './schedule-fields.js';

/** The options every `gex schedules` sub-command takes (the tree's). */
export interface SchedulesArgs extends StoreArgs {
  json: boolean;
}

/** Runs `work` with the schedules of the store the arguments name: the embedded store, or a server's APIs. */
export function onSchedules(args: SchedulesArgs, work: (schedules: SchedulesBackend) => Promise<void>): Promise<void> {
  return runCliAction(async (logger) => {
    const opened = await openStoreFromArgs(args, logger, { mustExist: true });
    try {
      const schedules =
        opened.kind === 'remote'
          ? await RemoteSchedules.open(opened.location, tokenFromArgs(args), opened.store, process.env, logger)
          : await EmbeddedSchedules.open(opened.backend, args.project);
      await work(schedules);
    } finally {
      await opened.close();
    }
  });
}

/** The handler of `gex schedules enable` and `disable`. */
export function setScheduleState(args: SchedulesArgs & { id: string }, state: 'enabled' | 'disabled'): Promise<void> {
  return onSchedules(args, async (schedules) => {
    const schedule = await schedules.setState(args.id, state);
    if (args.json) return print(scheduleFields(schedule, new Date()));
    say(`Schedule ${schedule.id} ${state}`);
  });
}
