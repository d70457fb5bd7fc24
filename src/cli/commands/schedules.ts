import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { displayId } from '../../common/log-text.js';
import { fromPlain, type JsonValue } from '../../json/index.js';
import { cronTicks } from '../../jobs/schedules/cron-tick.js';
import { activateSchedule, checkTarget } from '../../jobs/schedules/schedule-activation.js';
import {
  scheduleConfiguration,
  scheduleDefinition,
  SCHEDULER_COMPONENT_ID,
} from '../../jobs/schedules/schedule-definition.js';
import type { ScheduleRecord } from '../../jobs/schedules/schedule-repository.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import { GENERIC_EXTRACTOR_ID } from '../builtin-components.js';
import { runCliAction } from '../command-runner.js';
import { withEmbeddedBackend } from '../embedded-only.js';
import { fields, print, rowIdsOption, say } from '../store-command.js';

interface SchedulesArgs {
  store?: string;
  project?: string;
  json: boolean;
}

const REFUSAL = 'gex schedules works on the embedded store (a server is driven through its Scheduler API)';

function onSchedules(args: SchedulesArgs, work: (backend: EmbeddedBackend) => Promise<void>): Promise<void> {
  return runCliAction(() => withEmbeddedBackend(args.store, REFUSAL, work, { mustExist: true }));
}

function scheduleId(value: unknown): number {
  const text = String(value);
  if (!/^\d{1,15}$/.test(text))
    throw new UserError(
      'GEX_CLI_USAGE',
      `A schedule id is a number (gex schedules list shows them), got ${displayId(text.slice(0, 40))}`,
    );
  return Number(text);
}

async function scheduleOf(backend: EmbeddedBackend, args: SchedulesArgs, id: number) {
  const store = await backend.localSession(args.project);
  const token = await store.verifyToken();
  const schedules = backend.schedules();
  const schedule = await schedules.get(token.projectId, id);
  if (!schedule) throw new UserError('GEX_STORE_NOT_FOUND', `Schedule ${id} not found (gex schedules list shows them)`);
  return { store, token, schedules, schedule };
}

/** What `list` shows of a schedule: its definition, whether and when it fires next, its last job. */
function describe(schedule: ScheduleRecord, now: Date, lastJob: { id: number; status: string } | undefined) {
  const { definition } = schedule;
  const next =
    schedule.stopped === null && definition.state === 'enabled'
      ? (cronTicks(definition.cronTab, definition.timezone).nextAfter(now)?.toISOString() ?? null)
      : null;
  return fields({
    id: schedule.id,
    configurationId: schedule.configurationId,
    cronTab: definition.cronTab,
    timezone: definition.timezone,
    state: schedule.stopped === null ? definition.state : 'stopped',
    stoppedBecause: schedule.stopped,
    target: fromPlain(definition.target),
    nextRun: next,
    lastJob: lastJob ? fields({ id: lastJob.id, status: lastJob.status }) : null,
  });
}

/** Sets a schedule's state: a new version of its configuration, activated in place (same id). */
async function setState(
  backend: EmbeddedBackend,
  args: SchedulesArgs & { id: unknown },
  state: 'enabled' | 'disabled',
) {
  const { store, token, schedules, schedule } = await scheduleOf(backend, args, scheduleId(args.id));
  const current = await store.getConfiguration(SCHEDULER_COMPONENT_ID, schedule.configurationId);
  const definition = { ...scheduleDefinition(current.configuration), state };
  await store.updateConfiguration(SCHEDULER_COMPONENT_ID, schedule.configurationId, {
    configuration: fromPlain(scheduleConfiguration(definition)),
    changeDescription: `Schedule ${state}`,
  });
  await activateSchedule(store, token, schedules, schedule.configurationId);
  say(`Schedule ${schedule.id} ${state}`);
}

/** `gex schedules add|list|enable|disable|remove`: configurations run on a cron (docs/jobs.md#schedules). */
export function schedulesCommand(yargs: Argv): Argv {
  return yargs.command(
    'schedules <action>',
    'Run configurations on a cron: schedules fired by gex serve --workers N or gex worker (docs/jobs.md#schedules)',
    (y) =>
      y
        .option('store', {
          type: 'string',
          describe: 'the embedded store: a SQLite file or a postgres:// URL ($GEX_STORE, else gex-store.sqlite)',
        })
        .option('project', { type: 'string', describe: 'project of the embedded store (default: "default")' })
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
            onSchedules(args, async (backend) => {
              const store = await backend.localSession(args.project);
              const token = await store.verifyToken();
              const body = scheduleConfiguration({
                cronTab: args.cron,
                timezone: args.timezone,
                state: args.disabled ? 'disabled' : 'enabled',
                target: {
                  componentId: args.component,
                  configurationId: args['config-id'],
                  configurationRowIds: args['row-id'] ?? [],
                  mode: 'run',
                },
              });
              // checked before anything is stored: a refused schedule leaves no configuration behind
              const definition = scheduleDefinition(fromPlain(body));
              await checkTarget(definition, token, store);
              const configuration = await store.createConfiguration(SCHEDULER_COMPONENT_ID, {
                name: `Schedule of ${args['config-id']}`.slice(0, 256),
                configuration: fromPlain(body),
              });
              const schedule = await activateSchedule(store, token, backend.schedules(), configuration.id);
              const next = cronTicks(definition.cronTab, definition.timezone).nextAfter(new Date());
              if (args.json) return print(describe(schedule, new Date(), undefined));
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
            onSchedules(args, async (backend) => {
              const store = await backend.localSession(args.project);
              const token = await store.verifyToken();
              const schedules = backend.schedules();
              const list = await schedules.list(token.projectId);
              const executions = await schedules.executions(list.map((s) => s.id));
              const lastIds = list.map((s) => executions.get(s.id)?.[0]?.jobId).filter((id) => id !== undefined);
              const statuses = await backend.queueJobs().statuses(lastIds);
              const now = new Date();
              const rows = list.map((s) => {
                const last = executions.get(s.id)?.[0];
                return describe(s, now, last && { id: last.jobId, status: statuses.get(last.jobId) ?? 'deleted' });
              });
              if (args.json) return print(rows);
              if (rows.length === 0) return say('No schedules (gex schedules add CONFIG --cron …)');
              for (const row of rows) {
                const get = (key: string): JsonValue | undefined => row.get(key);
                const last = get('lastJob');
                const lastText =
                  last instanceof Map ? `job ${String(last.get('id'))} ${String(last.get('status'))}` : 'none';
                const target = get('target') as Map<string, JsonValue>;
                say(
                  `${String(get('id'))}  ${displayId(String(get('cronTab')))} ${String(get('timezone'))}  ${String(get('state'))}  ` +
                    `${displayId(String(target.get('componentId')))} ${displayId(String(target.get('configurationId')))}  ` +
                    `next ${String(get('nextRun') ?? '-')}  last ${lastText}` +
                    (get('stoppedBecause') ? `  (stopped: ${String(get('stoppedBecause'))})` : ''),
                );
              }
            }),
        )
        .command(
          'enable <id>',
          'Fire a schedule again (ticks while it was disabled are not made up)',
          (c) => c.positional('id', { type: 'string', demandOption: true }),
          (args) => onSchedules(args, (backend) => setState(backend, args, 'enabled')),
        )
        .command(
          'disable <id>',
          'Stop firing a schedule (kept; enable it again later)',
          (c) => c.positional('id', { type: 'string', demandOption: true }),
          (args) => onSchedules(args, (backend) => setState(backend, args, 'disabled')),
        )
        .command(
          'remove <id>',
          'Delete a schedule and its keboola.scheduler configuration (jobs it created stay)',
          (c) => c.positional('id', { type: 'string', demandOption: true }),
          (args) =>
            onSchedules(args, async (backend) => {
              const { store, token, schedules, schedule } = await scheduleOf(backend, args, scheduleId(args.id));
              await schedules.remove(token.projectId, schedule.id);
              await store.deleteConfiguration(SCHEDULER_COMPONENT_ID, schedule.configurationId).catch(() => undefined);
              say(`Schedule ${schedule.id} removed`);
            }),
        )
        .demandCommand(1, 'Name an action: add, list, enable, disable or remove'),
  );
}
