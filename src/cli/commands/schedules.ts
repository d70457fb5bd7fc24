import type { Argv } from 'yargs';
import { printList } from '../output/list-output.js';
import { displayId } from '../../common/log-text.js';
import { fromPlain, type JsonValue } from '../../json/index.js';
import { cronTicks } from '../../jobs/schedules/cron-tick.js';
import { scheduleConfiguration, scheduleDefinition } from '../../jobs/schedules/schedule-definition.js';
import { GENERIC_EXTRACTOR_ID } from '../builtin-components.js';
import { runCliAction } from '../store-commands/command-runner.js';
import { EmbeddedSchedules } from '../schedules/embedded-schedules.js';
import { RemoteSchedules } from '../schedules/remote-schedules.js';
import type { SchedulesBackend, ScheduleView } from '../schedules/schedules-backend.js';
import { fields, print, rowIdsOption, say } from '../store-commands/store-command.js';
import { openStoreFromArgs, storeOptions, tokenFromArgs, type StoreArgs } from '../options/store-options.js';

interface SchedulesArgs extends StoreArgs {
  json: boolean;
}

/** Runs `work` with the schedules of the store the arguments name: the embedded store, or a server's APIs. */
function onSchedules(args: SchedulesArgs, work: (schedules: SchedulesBackend) => Promise<void>): Promise<void> {
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

/** What `list` and `--json` show of a schedule: its definition, whether and when it fires next, its last job. */
function describe(schedule: ScheduleView, now: Date) {
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

/** A schedule's cells in a list (piped, joined by two spaces). */
function cells(schedule: ScheduleView, now: Date): string[] {
  const row = describe(schedule, now);
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

function setState(args: SchedulesArgs & { id: string }, state: 'enabled' | 'disabled'): Promise<void> {
  return onSchedules(args, async (schedules) => {
    const schedule = await schedules.setState(args.id, state);
    if (args.json) return print(describe(schedule, new Date()));
    say(`Schedule ${schedule.id} ${state}`);
  });
}

/**
 * `gex schedules add|list|enable|disable|remove`: configurations run on a cron (docs/jobs.md#schedules),
 * on the embedded store or through a server's Storage and Scheduler APIs.
 */
export function schedulesCommand(yargs: Argv): Argv {
  return yargs.command(
    'schedules <action>',
    'Run configurations on a cron: schedules fired by gex serve or gex worker (docs/jobs.md#schedules)',
    (y) =>
      storeOptions(y)
        .option('json', { type: 'boolean', default: false, describe: 'print JSON' })
        .example("$0 schedules add shop --cron '0 * * * *'", 'run configuration shop every hour (UTC)')
        .example("$0 schedules add shop --cron '30 6 * * 1-5' --timezone Europe/Prague", 'weekdays at 6:30 in Prague')
        .command(
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
              if (args.json) return print(describe(schedule, now));
              const next = cronTicks(definition.cronTab, definition.timezone).nextAfter(now);
              say(
                `Schedule ${schedule.id} added: ${displayId(definition.cronTab)} (${definition.timezone}) runs ${displayId(args.component)} ${displayId(args['config-id'])}` +
                  (definition.state === 'enabled' ? `; next run ${next?.toISOString() ?? 'never'}` : '; disabled'),
              );
            }),
        )
        .command(
          'list',
          "List the project's schedules: cron, state, next run, last job",
          (c) => c,
          (args) =>
            onSchedules(args, async (schedules) => {
              const list = await schedules.list();
              const now = new Date();
              if (args.json) return print(list.map((s) => describe(s, now)));
              if (list.length === 0) return say('No schedules (gex schedules add CONFIG --cron …)');
              printList(
                ['ID', 'CRON', 'STATE', 'CONFIGURATION', 'NEXT RUN', 'LAST JOB', 'STOPPED'],
                list.map((schedule) => cells(schedule, now)),
                { separator: '  ' },
              );
            }),
        )
        .command(
          'enable <id>',
          'Fire a schedule again (ticks while it was disabled are not made up)',
          (c) => c.positional('id', { type: 'string', demandOption: true }),
          (args) => setState(args, 'enabled'),
        )
        .command(
          'disable <id>',
          'Stop firing a schedule (kept; enable it again later)',
          (c) => c.positional('id', { type: 'string', demandOption: true }),
          (args) => setState(args, 'disabled'),
        )
        .command(
          'remove <id>',
          'Delete a schedule and its keboola.scheduler configuration (jobs it created stay)',
          (c) => c.positional('id', { type: 'string', demandOption: true }),
          (args) =>
            onSchedules(args, async (schedules) => {
              await schedules.remove(args.id);
              say(`Schedule ${args.id} removed`);
            }),
        )
        .demandCommand(1, 'Name an action: add, list, enable, disable or remove'),
  );
}
