import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { fromPlain, isJsonObject, isList, type JsonValue } from '../../json/index.js';
import {
  scheduleConfiguration,
  scheduleDefinition,
  type ScheduleDefinition,
} from '../../jobs/schedules/schedule-definition.js';
import { SCHEDULER_COMPONENT_ID } from '../../jobs/schedules/scheduler-component.js';
import type { ConfigStore } from '../../store/config-store.js';
import type { GivenToken } from '../../store/remote/api-index.js';
import { QueueApiClient } from '../../store/remote/queue-api-client.js';
import { SchedulerApiClient } from '../../store/remote/scheduler-api-client.js';
import { StoreError } from '../../store/store-error.js';
import { scheduleIdArg, type SchedulesBackend, type ScheduleView } from './schedules-backend.js';

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

/** A schedule object of Keboola's Scheduler API as `gex schedules` shows it; refused when malformed. */
function viewOf(value: JsonValue): Omit<ScheduleView, 'lastJob'> & { lastJobId: string | null } {
  if (!isJsonObject(value) || text(value.get('id')) === '')
    throw new UserError('GEX_STORAGE_API_REFUSED', 'The Scheduler API answered with no schedule object.');
  // a schedule the server holds is shown as it is, even one an older gex accepted that never fires
  const definition = scheduleDefinition(fromPlain({ schedule: value.get('schedule'), target: value.get('target') }), {
    neverFiring: 'accept',
  });
  const executions = value.get('executions');
  const last = isList(executions) && isJsonObject(executions[0]) ? text(executions[0].get('jobId')) : '';
  return {
    id: text(value.get('id')),
    configurationId: text(value.get('configurationId')),
    definition,
    stopped: null,
    lastJobId: last === '' ? null : last,
  };
}

/**
 * The schedules of a server's project: the keboola.scheduler configuration through the Storage
 * API (the config store), its activation and the schedules through the Scheduler API
 * (store/remote/scheduler-api-client.ts), the last job's status through the Job Queue API.
 */
export class RemoteSchedules implements SchedulesBackend {
  private constructor(
    private readonly store: ConfigStore,
    private readonly scheduler: SchedulerApiClient,
    private readonly queue: QueueApiClient | undefined,
  ) {}

  static async open(
    url: string,
    token: GivenToken,
    store: ConfigStore,
    env: NodeJS.ProcessEnv,
    logger?: Logger,
  ): Promise<RemoteSchedules> {
    const scheduler = await SchedulerApiClient.open(url, token, env, logger);
    const queue = await QueueApiClient.open(url, token, env, logger).catch(() => undefined);
    return new RemoteSchedules(store, scheduler, queue);
  }

  private async withLastJob(found: ReturnType<typeof viewOf>): Promise<ScheduleView> {
    const { lastJobId, ...view } = found;
    if (lastJobId === null) return { ...view, lastJob: null };
    const job = this.queue ? await this.queue.getJob(lastJobId).catch(() => null) : null;
    const status = isJsonObject(job) ? text(job.get('status')) : '';
    return { ...view, lastJob: { id: lastJobId, status: status === '' ? 'unknown' : status } };
  }

  private async activate(configurationId: string): Promise<ScheduleView> {
    return this.withLastJob(viewOf(await this.scheduler.activate(configurationId)));
  }

  private async one(id: string): Promise<ReturnType<typeof viewOf>> {
    scheduleIdArg(id);
    try {
      return viewOf(await this.scheduler.getSchedule(id));
    } catch (error) {
      if (error instanceof StoreError && error.status === 404)
        throw new UserError('GEX_STORE_NOT_FOUND', `Schedule ${id} not found (gex schedules list shows them)`, {
          cause: error,
        });
      throw error;
    }
  }

  async add(definition: ScheduleDefinition, name: string): Promise<ScheduleView> {
    const configuration = await this.store.createConfiguration(SCHEDULER_COMPONENT_ID, {
      name,
      configuration: fromPlain(scheduleConfiguration(definition)),
    });
    try {
      return await this.activate(configuration.id);
    } catch (error) {
      // the server refused the schedule (a target it cannot run): nothing is left behind
      await this.store.deleteConfiguration(SCHEDULER_COMPONENT_ID, configuration.id).catch(() => undefined);
      throw error;
    }
  }

  async list(): Promise<ScheduleView[]> {
    const views: ScheduleView[] = [];
    for (const value of await this.scheduler.listSchedules()) views.push(await this.withLastJob(viewOf(value)));
    return views;
  }

  async setState(id: string, state: 'enabled' | 'disabled'): Promise<ScheduleView> {
    const schedule = await this.one(id);
    const current = await this.store.getConfiguration(SCHEDULER_COMPONENT_ID, schedule.configurationId);
    const definition = { ...scheduleDefinition(current.configuration), state };
    await this.store.updateConfiguration(SCHEDULER_COMPONENT_ID, schedule.configurationId, {
      configuration: fromPlain(scheduleConfiguration(definition)),
      changeDescription: `Schedule ${state}`,
    });
    return this.activate(schedule.configurationId);
  }

  async remove(id: string): Promise<void> {
    const schedule = await this.one(id);
    await this.scheduler.removeSchedule(id);
    await this.store.deleteConfiguration(SCHEDULER_COMPONENT_ID, schedule.configurationId).catch(() => undefined);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
