import { got, RequestError, TimeoutError, type Got, type Method, type PlainResponse } from 'got';
import { ApplicationError, UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { decodeJson, isJsonObject, JsonSyntaxError, stringifyExact, type JsonObject, type JsonValue } from '../../json/index.js';
import type { ConfigStore, StateWrite } from '../config-store.js';
import { StateSaveFailed, type StateOwner } from '../state-save-failed.js';
import { StoreError } from '../store-error.js';
import type {
  Component,
  ComponentWithConfigurations,
  ConfigVersionDetail,
  ConfigVersionItem,
  Configuration,
  CopyConfigurationInput,
  CreateConfigurationInput,
  CreateRowInput,
  ListInclude,
  MetadataItem,
  Row,
  RowVersion,
  TokenInfo,
  UpdateConfigurationInput,
  UpdateRowInput,
  VersionListOptions,
} from '../types.js';
import {
  componentFromWire,
  configurationFromWire,
  metadataFromWire,
  rowFromWire,
  rowVersionFromWire,
  versionDetailFromWire,
  versionItemFromWire,
} from '../wire.js';
import { RetryBudget, RUN_STORE_RETRY, SYSTEM_CLOCK, type Clock, type RetryBudgetSettings } from './retry-budget.js';

export interface HttpConfigStoreOptions {
  /** Storage API address, e.g. https://connection.keboola.com or http://127.0.0.1:8080 */
  url: string;
  token: string;
  /** time budget and retries of one call (default RUN_STORE_RETRY); the three below override parts of it */
  retry?: RetryBudgetSettings;
  /** retries of a failed call (the official PHP client: 11) */
  maxRetries?: number;
  /** first retry delay in ms, doubling (the official client: 1000) */
  retryBaseMs?: number;
  /** the longest one attempt may take */
  timeoutMs?: number;
  /** replaced in tests: the retry loop's time and waits */
  clock?: Clock;
  logger?: Logger;
}

const VERSION_CONFLICT = 'storage.components.configurations.versionConflict';

type Body = Array<[string, JsonValue | undefined]>;

function body(entries: Body): JsonObject {
  const m: JsonObject = new Map();
  for (const [k, v] of entries) if (v !== undefined) m.set(k, v);
  return m;
}

/**
 * An id as one URL path segment. `.` and `..` (also as `%2E`) are path steps to every URL parser:
 * sent, a row `..` would address its configuration (`…/rows/../state` is the configuration's
 * state). No encoding can carry them, so they are refused before anything is sent.
 */
function enc(id: string): string {
  if (id === '' || id === '.' || id === '..') {
    throw new StoreError(400, 'storage.invalidId', `The id ${JSON.stringify(id)} cannot be addressed in a Storage API URL; rename it in the store.`);
  }
  return encodeURIComponent(id);
}

/**
 * The ConfigStore over HTTP — gex's own server or a real Keboola stack. Requests are JSON in the
 * branch form (`/v2/storage/branch/default/…`) with the exact encoding of bodies; failures are
 * retried like the official client does: network errors, 5xx except 501, and 409 version
 * conflicts, with exponential backoff — within a time budget per call (RetryBudget), so that an
 * unreachable store fails in bounded time. The token never goes to another origin: a redirect
 * elsewhere is refused.
 */
export class HttpConfigStore implements ConfigStore {
  private readonly http: Got;
  private readonly retry: RetryBudgetSettings;
  private readonly origin: string;

  constructor(private readonly options: HttpConfigStoreOptions) {
    const base = options.retry ?? RUN_STORE_RETRY;
    this.retry = {
      ...base,
      maxRetries: options.maxRetries ?? base.maxRetries,
      baseDelayMs: options.retryBaseMs ?? base.baseDelayMs,
      attemptTimeoutMs: options.timeoutMs ?? base.attemptTimeoutMs,
    };
    this.origin = new URL(options.url).origin;
    this.http = got.extend({
      prefixUrl: options.url.replace(/\/+$/, ''),
      throwHttpErrors: false,
      retry: { limit: 0 },
      responseType: 'text',
      // same-origin redirects only: the token must not reach another origin (call() explains a refusal)
      followRedirect: (response: PlainResponse) => this.sameOrigin(redirectTarget(response)),
      headers: { 'X-StorageApi-Token': options.token, 'User-Agent': 'gex Storage API client', Accept: 'application/json' },
    });
  }

  private sameOrigin(url: URL | null): boolean {
    return url !== null && url.origin === this.origin;
  }

  private async call(method: Method, path: string, payload?: JsonObject, query?: Record<string, string>): Promise<JsonValue> {
    const url = `v2/storage/${path}`;
    const budget = new RetryBudget(this.retry, this.options.clock ?? SYSTEM_CLOCK);
    for (let attempt = 1; ; attempt++) {
      let retryReason: string;
      let failure: () => Error;
      const timeout = { connect: budget.connectTimeoutMs(), request: budget.attemptTimeoutMs() };
      try {
        const response = await this.http(url, {
          method,
          searchParams: query,
          body: payload ? stringifyExact(payload) : undefined,
          headers: payload ? { 'Content-Type': 'application/json' } : undefined,
          timeout,
        });
        const elsewhere = redirectTarget(response);
        if (elsewhere && !this.sameOrigin(elsewhere)) {
          throw new UserError(
            `The Storage API at ${this.options.url} redirected ${method} ${url} to another origin, ${elsewhere.origin}; gex does not send the token there. ` +
              'If that is the right address, use it as --store (KBC_URL).',
          );
        }
        const text = response.body;
        const parsed = text === '' ? null : safeDecode(text);
        if (response.statusCode < 300) return parsed;
        const code = isJsonObject(parsed) ? String(parsed.get('code') ?? '') : '';
        const message = isJsonObject(parsed) && typeof parsed.get('error') === 'string' ? String(parsed.get('error')) : `${response.statusCode} ${response.statusMessage ?? ''}`.trim();
        const retryable = (response.statusCode >= 500 && response.statusCode !== 501) || (response.statusCode === 409 && code === VERSION_CONFLICT);
        if (!retryable) throw new StoreError(response.statusCode, code, message);
        retryReason = `${response.statusCode}${code ? ` ${code}` : ''}`;
        failure = () =>
          response.statusCode >= 500
            ? new ApplicationError(`Storage API ${method} ${url} failed: [${response.statusCode}] ${message}${this.gaveUp(attempt, budget)}`)
            : new StoreError(response.statusCode, code, message);
      } catch (error) {
        if (!(error instanceof RequestError)) throw error;
        retryReason = error.code ?? error.message;
        failure = () => new UserError(`The Storage API at ${this.options.url} cannot be reached: ${reachFailure(error, timeout)}${this.gaveUp(attempt, budget)}`, { cause: error });
      }
      const delay = budget.delayBefore(attempt);
      if (delay === null) throw failure();
      // info: a command someone waits for shows only its one-line outcome (it logs at warn)
      this.options.logger?.info(`Storage API ${method} ${url}: ${retryReason}; retry ${attempt} of ${this.retry.maxRetries} in ${(delay / 1000).toFixed(1)} s`);
      await budget.sleep(delay);
    }
  }

  private gaveUp(attempts: number, budget: RetryBudget): string {
    return attempts === 1 ? '' : ` (${attempts} attempts in ${(budget.elapsedMs() / 1000).toFixed(1)} s)`;
  }

  private configs(componentId: string, rest = ''): string {
    return `branch/default/components/${enc(componentId)}/configs${rest}`;
  }

  private rows(componentId: string, configId: string, rest = ''): string {
    return this.configs(componentId, `/${enc(configId)}/rows${rest}`);
  }

  private static list<T>(value: JsonValue, read: (v: JsonValue) => T): T[] {
    return Array.isArray(value) ? value.map(read) : [];
  }

  private static versionQuery(options: VersionListOptions): Record<string, string> {
    const query: Record<string, string> = {};
    if (options.include) query.include = options.include.join(',');
    if (options.limit !== undefined) query.limit = String(options.limit);
    if (options.offset !== undefined) query.offset = String(options.offset);
    return query;
  }

  async verifyToken(): Promise<TokenInfo> {
    const v = await this.call('GET', 'tokens/verify');
    const owner = isJsonObject(v) ? v.get('owner') : undefined;
    const get = (o: JsonValue | undefined, k: string) => (isJsonObject(o) ? o.get(k) : undefined);
    return {
      id: Number(get(v, 'id') ?? 0),
      description: String(get(v, 'description') ?? ''),
      projectId: Number(get(owner, 'id') ?? 0),
      projectName: String(get(owner, 'name') ?? ''),
      readOnly: get(v, 'canManageBuckets') === false && get(v, 'isMasterToken') !== true,
      created: String(get(v, 'created') ?? ''),
    };
  }

  async getComponent(componentId: string): Promise<Component> {
    return componentFromWire(await this.call('GET', `branch/default/components/${enc(componentId)}`));
  }

  async listComponents(options: { componentType?: string; include?: ListInclude[]; isDeleted?: boolean } = {}): Promise<ComponentWithConfigurations[]> {
    const query: Record<string, string> = { include: (options.include ?? []).join(','), isDeleted: options.isDeleted ? '1' : '0' };
    if (options.componentType) query.componentType = options.componentType;
    const list = await this.call('GET', 'branch/default/components', undefined, query);
    return HttpConfigStore.list(list, (c) => {
      const configurations = isJsonObject(c) ? c.get('configurations') : undefined;
      return { component: componentFromWire(c), configurations: HttpConfigStore.list(configurations ?? [], configurationFromWire) };
    });
  }

  async listConfigurations(componentId: string, options: { isDeleted?: boolean } = {}): Promise<Configuration[]> {
    return HttpConfigStore.list(await this.call('GET', this.configs(componentId), undefined, { isDeleted: options.isDeleted ? '1' : '0' }), configurationFromWire);
  }

  async createConfiguration(componentId: string, input: CreateConfigurationInput): Promise<Configuration> {
    const payload = body([
      ['name', input.name],
      ['configurationId', input.configurationId],
      ['description', input.description],
      ['configuration', input.configuration],
      ['state', input.state],
      ['changeDescription', input.changeDescription],
      ['isDisabled', input.isDisabled],
    ]);
    return configurationFromWire(await this.call('POST', this.configs(componentId), payload));
  }

  async getConfiguration(componentId: string, configId: string): Promise<Configuration> {
    return configurationFromWire(await this.call('GET', this.configs(componentId, `/${enc(configId)}`)));
  }

  async updateConfiguration(componentId: string, configId: string, input: UpdateConfigurationInput): Promise<Configuration> {
    const payload = body([
      ['name', input.name],
      ['description', input.description],
      ['configuration', input.configuration],
      ['state', input.state],
      ['changeDescription', input.changeDescription],
      ['isDisabled', input.isDisabled],
      ['rowsSortOrder', input.rowsSortOrder],
    ]);
    return configurationFromWire(await this.call('PUT', this.configs(componentId, `/${enc(configId)}`), payload));
  }

  async updateConfigurationState(componentId: string, configId: string, state: JsonValue): Promise<Configuration> {
    return configurationFromWire(await this.call('PUT', this.configs(componentId, `/${enc(configId)}/state`), body([['state', state]])));
  }

  async deleteConfiguration(componentId: string, configId: string): Promise<void> {
    await this.call('DELETE', this.configs(componentId, `/${enc(configId)}`));
  }

  async restoreConfiguration(componentId: string, configId: string): Promise<Configuration> {
    return configurationFromWire(await this.call('POST', this.configs(componentId, `/${enc(configId)}/restore`), body([])));
  }

  async listConfigurationVersions(componentId: string, configId: string, options: VersionListOptions = {}): Promise<ConfigVersionItem[]> {
    const list = await this.call('GET', this.configs(componentId, `/${enc(configId)}/versions`), undefined, HttpConfigStore.versionQuery(options));
    return HttpConfigStore.list(list, versionItemFromWire);
  }

  async getConfigurationVersion(componentId: string, configId: string, version: number): Promise<ConfigVersionDetail> {
    return versionDetailFromWire(await this.call('GET', this.configs(componentId, `/${enc(configId)}/versions/${version}`)));
  }

  async rollbackConfiguration(componentId: string, configId: string, version: number, changeDescription?: string): Promise<{ version: number }> {
    const result = await this.call('POST', this.configs(componentId, `/${enc(configId)}/versions/${version}/rollback`), body([['changeDescription', changeDescription]]));
    return { version: Number(isJsonObject(result) ? result.get('version') : NaN) };
  }

  async copyConfiguration(componentId: string, configId: string, version: number, input: CopyConfigurationInput): Promise<Configuration> {
    const payload = body([
      ['name', input.name],
      ['description', input.description],
      ['changeDescription', input.changeDescription],
    ]);
    const result = await this.call('POST', this.configs(componentId, `/${enc(configId)}/versions/${version}/create`), payload);
    // Keboola answers with at least the new id; fetch the whole configuration
    const id = isJsonObject(result) ? String(result.get('id')) : '';
    return this.getConfiguration(componentId, id);
  }

  async listRows(componentId: string, configId: string): Promise<Row[]> {
    return HttpConfigStore.list(await this.call('GET', this.rows(componentId, configId)), rowFromWire);
  }

  async createRow(componentId: string, configId: string, input: CreateRowInput): Promise<Row> {
    const payload = body([
      ['rowId', input.rowId],
      ['name', input.name],
      ['description', input.description],
      ['configuration', input.configuration],
      ['state', input.state],
      ['changeDescription', input.changeDescription],
      ['isDisabled', input.isDisabled],
    ]);
    return rowFromWire(await this.call('POST', this.rows(componentId, configId), payload));
  }

  async getRow(componentId: string, configId: string, rowId: string): Promise<Row> {
    return rowFromWire(await this.call('GET', this.rows(componentId, configId, `/${enc(rowId)}`)));
  }

  async updateRow(componentId: string, configId: string, rowId: string, input: UpdateRowInput): Promise<Row> {
    const payload = body([
      ['name', input.name],
      ['description', input.description],
      ['configuration', input.configuration],
      ['state', input.state],
      ['changeDescription', input.changeDescription],
      ['isDisabled', input.isDisabled],
    ]);
    return rowFromWire(await this.call('PUT', this.rows(componentId, configId, `/${enc(rowId)}`), payload));
  }

  async updateRowState(componentId: string, configId: string, rowId: string, state: JsonValue): Promise<Row> {
    return rowFromWire(await this.call('PUT', this.rows(componentId, configId, `/${enc(rowId)}/state`), body([['state', state]])));
  }

  /**
   * The Storage API saves one state per call, so this cannot be atomic: the previous states are read
   * first, then each state is saved in turn; when one fails, the ones already saved are put back
   * (newest first) — best effort, as another writer may have changed them meanwhile — and a
   * StateSaveFailed says which were restored and which not. A save that failed without an answer
   * (network, 5xx) may have been applied, so it is put back too.
   */
  async saveStates(componentId: string, configId: string, writes: StateWrite[]): Promise<void> {
    const current = await this.getConfiguration(componentId, configId);
    const previous = writes.map(({ rowId }) => {
      if (rowId === null) return current.state;
      const row = current.rows.find((r) => r.id === rowId);
      if (!row) throw StoreError.notFound(`Row ${rowId} not found`);
      return row.state;
    });
    const save = (rowId: string | null, state: JsonValue) =>
      rowId === null ? this.updateConfigurationState(componentId, configId, state) : this.updateRowState(componentId, configId, rowId, state);
    for (const [i, { rowId, state }] of writes.entries()) {
      try {
        await save(rowId, state);
      } catch (failure) {
        if (i === 0 && failure instanceof StoreError) throw failure;
        const undo = writes.slice(0, failure instanceof StoreError ? i : i + 1).map((w, j) => ({ owner: w.rowId, state: previous[j] }));
        const restored: StateOwner[] = [];
        const notRestored: Array<{ owner: StateOwner; reason: string }> = [];
        for (const { owner, state: before } of undo.reverse()) {
          try {
            await save(owner, before);
            restored.push(owner);
          } catch (error) {
            notRestored.push({ owner, reason: (error as Error).message });
          }
        }
        throw new StateSaveFailed(rowId, failure, restored, notRestored);
      }
    }
  }

  async deleteRow(componentId: string, configId: string, rowId: string, changeDescription?: string): Promise<void> {
    await this.call('DELETE', this.rows(componentId, configId, `/${enc(rowId)}`), changeDescription === undefined ? undefined : body([['changeDescription', changeDescription]]));
  }

  async listRowVersions(componentId: string, configId: string, rowId: string, options: VersionListOptions = {}): Promise<RowVersion[]> {
    const list = await this.call('GET', this.rows(componentId, configId, `/${enc(rowId)}/versions`), undefined, HttpConfigStore.versionQuery(options));
    return HttpConfigStore.list(list, rowVersionFromWire);
  }

  async getRowVersion(componentId: string, configId: string, rowId: string, version: number): Promise<RowVersion> {
    return rowVersionFromWire(await this.call('GET', this.rows(componentId, configId, `/${enc(rowId)}/versions/${version}`)));
  }

  async rollbackRow(componentId: string, configId: string, rowId: string, version: number, changeDescription?: string): Promise<Row> {
    return rowFromWire(await this.call('POST', this.rows(componentId, configId, `/${enc(rowId)}/versions/${version}/rollback`), body([['changeDescription', changeDescription]])));
  }

  async copyRow(componentId: string, configId: string, rowId: string, version: number, options: { targetConfigId?: string; changeDescription?: string } = {}): Promise<Row> {
    const payload = body([
      ['targetConfigId', options.targetConfigId],
      ['changeDescription', options.changeDescription],
    ]);
    return rowFromWire(await this.call('POST', this.rows(componentId, configId, `/${enc(rowId)}/versions/${version}/create`), payload));
  }

  async addMetadata(componentId: string, configId: string, metadata: Array<{ key: string; value: string }>): Promise<MetadataItem[]> {
    const payload = body([['metadata', metadata.map((m) => body([['key', m.key], ['value', m.value]]))]]);
    return HttpConfigStore.list(await this.call('POST', this.configs(componentId, `/${enc(configId)}/metadata`), payload), metadataFromWire);
  }

  async listMetadata(componentId: string, configId: string): Promise<MetadataItem[]> {
    return HttpConfigStore.list(await this.call('GET', this.configs(componentId, `/${enc(configId)}/metadata`)), metadataFromWire);
  }

  async deleteMetadata(componentId: string, configId: string, metadataId: string): Promise<void> {
    await this.call('DELETE', this.configs(componentId, `/${enc(configId)}/metadata/${enc(metadataId)}`));
  }
}

/** Where a 3xx response points, or null (not a redirect, or no usable Location). */
function redirectTarget(response: PlainResponse): URL | null {
  const location = response.headers.location;
  if (response.statusCode < 300 || response.statusCode >= 400 || !location) return null;
  try {
    return new URL(location, response.url);
  } catch {
    return null;
  }
}

/** A network failure in plain words (got's timeout messages name its internals). */
function reachFailure(error: RequestError, timeout: { connect: number; request: number }): string {
  if (!(error instanceof TimeoutError)) return error.message;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1).replace(/\.0$/, '')} s`;
  return error.event === 'connect' ? `no connection within ${seconds(timeout.connect)}` : `no answer within ${seconds(timeout.request)}`;
}

function safeDecode(text: string): JsonValue {
  try {
    return decodeJson(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) return text;
    throw e;
  }
}
