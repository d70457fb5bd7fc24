import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { isJsonObject, isList, type JsonObject, type JsonValue } from '../../json/index.js';
import { openService, type GivenToken } from './api-index.js';
import type { StorageApiClient } from './storage-api-client.js';

const LIMIT = { maxBytes: 16 * 1024 * 1024, tooLargeHint: 'far more than a list of subscriptions takes: not read' };

/**
 * The Notification API of a Storage API (gex serve or a Keboola stack), found in the API index
 * (`services`: notification). Answers are its objects, as they came; only GETs are retried (a POST
 * whose answer was lost may have created the subscription or sent the sample already).
 */
export class NotificationApiClient {
  private constructor(private readonly api: StorageApiClient) {}

  static async open(
    url: string,
    token: GivenToken,
    env: NodeJS.ProcessEnv,
    logger?: Logger,
  ): Promise<NotificationApiClient> {
    const { service } = await openService(url, token, env, { id: 'notification', name: 'Notification API' }, logger);
    return new NotificationApiClient(service);
  }

  /** POST /project-subscriptions: the subscription created (with its signing secret, shown once) */
  async create(body: JsonObject): Promise<JsonObject> {
    const answer = await this.api.call('POST', 'project-subscriptions', body, undefined, { retry: false, ...LIMIT });
    return object(answer, 'POST /project-subscriptions');
  }

  async list(): Promise<JsonValue[]> {
    const answer = await this.api.call('GET', 'project-subscriptions', undefined, undefined, LIMIT);
    if (!isList(answer))
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        'The Notification API answered GET /project-subscriptions with no list.',
      );
    return answer;
  }

  /** DELETE /project-subscriptions/{id}; a StoreError with status 404 when the project has no such subscription */
  async remove(id: string): Promise<void> {
    await this.api.call('DELETE', `project-subscriptions/${id}`, undefined, undefined, { retry: false });
  }

  /** POST /project-subscriptions/{id}/test (gex's): a sample sent now, and how the attempt ended */
  async test(id: string): Promise<JsonObject> {
    const answer = await this.api.call('POST', `project-subscriptions/${id}/test`, undefined, undefined, {
      retry: false,
      ...LIMIT,
    });
    return object(answer, 'POST /project-subscriptions/{id}/test');
  }

  /** GET /notification-deliveries (gex's): events newest first, each with its attempts */
  async deliveries(query: { subscriptionId?: string; limit: number }): Promise<JsonValue[]> {
    const answer = await this.api.call(
      'GET',
      'notification-deliveries',
      undefined,
      {
        limit: String(query.limit),
        ...(query.subscriptionId === undefined ? {} : { subscriptionId: query.subscriptionId }),
      },
      LIMIT,
    );
    if (!isList(answer))
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        'The Notification API answered GET /notification-deliveries with no list.',
      );
    return answer;
  }
}

function object(answer: JsonValue, call: string): JsonObject {
  if (!isJsonObject(answer))
    throw new UserError('GEX_STORAGE_API_REFUSED', `The Notification API answered ${call} with no object.`);
  return answer;
}
