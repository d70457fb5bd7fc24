import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { isList, type JsonValue } from '../../json/index.js';
import { openService, type GivenToken } from './api-index.js';
import type { StorageApiClient } from './storage-api-client.js';

const LIMIT = { maxBytes: 16 * 1024 * 1024, tooLargeHint: 'far more than a list of schedules takes: not read' };

/**
 * The Scheduler API of a Storage API (gex serve or a Keboola stack), found in the API index
 * (`services`: scheduler). Answers are its schedule objects, as they came; only GETs are retried.
 */
export class SchedulerApiClient {
  private constructor(private readonly api: StorageApiClient) {}

  static async open(
    url: string,
    token: GivenToken,
    env: NodeJS.ProcessEnv,
    logger?: Logger,
  ): Promise<SchedulerApiClient> {
    const { service } = await openService(url, token, env, { id: 'scheduler', name: 'Scheduler API' }, logger);
    return new SchedulerApiClient(service);
  }

  /** POST /schedules: the schedule of a keboola.scheduler configuration (re)activated */
  activate(configurationId: string): Promise<JsonValue> {
    return this.api.call('POST', 'schedules', new Map([['configurationId', configurationId]]), undefined, {
      retry: false,
      ...LIMIT,
    });
  }

  /** GET /schedules/{id}; a StoreError with status 404 when the project has no such schedule */
  getSchedule(id: string): Promise<JsonValue> {
    return this.api.call('GET', `schedules/${id}`, undefined, undefined, LIMIT);
  }

  async listSchedules(): Promise<JsonValue[]> {
    const answer = await this.api.call('GET', 'schedules', undefined, undefined, LIMIT);
    if (!isList(answer))
      throw new UserError('GEX_STORAGE_API_REFUSED', 'The Scheduler API answered GET /schedules with no list.');
    return answer;
  }

  async removeSchedule(id: string): Promise<void> {
    await this.api.call('DELETE', `schedules/${id}`, undefined, undefined, { retry: false });
  }
}
