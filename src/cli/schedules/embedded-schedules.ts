import { UserError } from '../../common/errors.js';
import { fromPlain } from '../../json/index.js';
import { activateSchedule, checkTarget } from '../../jobs/schedules/schedule-activation.js';
import { scheduleConfiguration, type ScheduleDefinition } from '../../jobs/schedules/schedule-definition.js';
import { setScheduleState } from '../../jobs/schedules/schedule-state.js';
import { SCHEDULER_COMPONENT_ID } from '../../jobs/schedules/scheduler-component.js';
import { ScheduleRepository, type ScheduleRecord } from '../../jobs/schedules/schedule-repository.js';
import { JobReads } from '../../jobs/job-reads.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import type { EmbeddedConfigStore } from '../../store/embedded/embedded-config-store.js';
import type { TokenInfo } from '../../store/types.js';
import { scheduleIdArg, type SchedulesBackend, type ScheduleView } from './schedules-backend.js';

/** The schedules of a project of the embedded store, through its internal token. */
export class EmbeddedSchedules implements SchedulesBackend {
  private constructor(
    private readonly backend: EmbeddedBackend,
    private readonly store: EmbeddedConfigStore,
    private readonly token: TokenInfo,
  ) {}

  static async open(backend: EmbeddedBackend, project?: string): Promise<EmbeddedSchedules> {
    const store = await backend.localSession(project);
    return new EmbeddedSchedules(backend, store, await store.verifyToken());
  }

  private get schedules(): ScheduleRepository {
    return new ScheduleRepository(this.backend.db);
  }

  private async views(records: ScheduleRecord[]): Promise<ScheduleView[]> {
    const executions = await this.schedules.executions(records.map((s) => s.id));
    const lastIds = records.map((s) => executions.get(s.id)?.[0]?.jobId).filter((id) => id !== undefined);
    const statuses = await new JobReads(this.backend.db).statuses(lastIds);
    return records.map((s) => {
      const last = executions.get(s.id)?.[0];
      return {
        id: String(s.id),
        configurationId: s.configurationId,
        definition: s.definition,
        stopped: s.stopped,
        lastJob: last ? { id: String(last.jobId), status: statuses.get(last.jobId) ?? 'deleted' } : null,
      };
    });
  }

  private async record(id: string): Promise<ScheduleRecord> {
    const schedule = await this.schedules.get(this.token.projectId, Number(scheduleIdArg(id)));
    if (!schedule)
      throw new UserError('GEX_STORE_NOT_FOUND', `Schedule ${id} not found (gex schedules list shows them)`);
    return schedule;
  }

  async add(definition: ScheduleDefinition, name: string): Promise<ScheduleView> {
    // checked before anything is stored: a refused schedule leaves no configuration behind
    await checkTarget(definition, this.token, this.store);
    const configuration = await this.store.createConfiguration(SCHEDULER_COMPONENT_ID, {
      name,
      configuration: fromPlain(scheduleConfiguration(definition)),
    });
    const schedule = await activateSchedule(this.store, this.token, this.schedules, configuration.id);
    return (await this.views([schedule]))[0];
  }

  async list(): Promise<ScheduleView[]> {
    return this.views(await this.schedules.list(this.token.projectId));
  }

  async setState(id: string, state: 'enabled' | 'disabled'): Promise<ScheduleView> {
    const schedule = await this.record(id);
    const activated = await setScheduleState(this.store, this.token, this.schedules, schedule, state);
    return (await this.views([activated]))[0];
  }

  async remove(id: string): Promise<void> {
    const schedule = await this.record(id);
    await this.schedules.remove(this.token.projectId, schedule.id);
    await this.store.deleteConfiguration(SCHEDULER_COMPONENT_ID, schedule.configurationId).catch(() => undefined);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
