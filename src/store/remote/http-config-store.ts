import type { Method } from 'got';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
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
  ConfigMetadataItem,
  Row,
  RowVersion,
  TokenInfo,
  UpdateConfigurationInput,
  UpdateRowInput,
  VersionListOptions,
} from '../types.js';
import { componentFromWire } from '../wire/components.js';
import {
  configMetadataFromWire,
  configurationFromWire,
  rowFromWire,
  rowVersionFromWire,
  versionDetailFromWire,
  versionItemFromWire,
} from '../wire/configurations.js';
import { StorageApiClient, type StorageApiClientOptions } from './storage-api-client.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

export type HttpConfigStoreOptions = StorageApiClientOptions;

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
    throw StoreError.keboola(
      KEBOOLA_ERRORS.invalidId,
      `The id ${JSON.stringify(id)} cannot be addressed in a Storage API URL; rename it in the store.`,
    );
  }
  return encodeURIComponent(id);
}

/**
 * The ConfigStore over HTTP — gex's own server or a real Keboola stack. Requests are JSON in the
 * branch form (`/v2/storage/branch/default/…`) with the exact encoding of bodies, sent through a
 * StorageApiClient (retries within a time budget, the token kept to its origin).
 */
export class HttpConfigStore implements ConfigStore {
  private readonly api: StorageApiClient;

  constructor(options: HttpConfigStoreOptions) {
    this.api = new StorageApiClient(options);
  }

  private call(method: Method, path: string, payload?: JsonObject, query?: Record<string, string>): Promise<JsonValue> {
    return this.api.call(method, path, payload, query);
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
      canManageTokens: get(v, 'canManageTokens') === true || get(v, 'isMasterToken') === true,
      // gex's own field; a Keboola stack has no runner tokens
      runner: get(v, 'gexRunner') === true,
      created: String(get(v, 'created') ?? ''),
    };
  }

  async getComponent(componentId: string): Promise<Component> {
    return componentFromWire(await this.call('GET', `branch/default/components/${enc(componentId)}`));
  }

  async listComponents(
    options: { componentType?: string; include?: ListInclude[]; isDeleted?: boolean } = {},
  ): Promise<ComponentWithConfigurations[]> {
    const query: Record<string, string> = {
      include: (options.include ?? []).join(','),
      isDeleted: options.isDeleted ? '1' : '0',
    };
    if (options.componentType) query.componentType = options.componentType;
    const list = await this.call('GET', 'branch/default/components', undefined, query);
    return HttpConfigStore.list(list, (c) => {
      const configurations = isJsonObject(c) ? c.get('configurations') : undefined;
      return {
        component: componentFromWire(c),
        configurations: HttpConfigStore.list(configurations ?? [], configurationFromWire),
      };
    });
  }

  async listConfigurations(componentId: string, options: { isDeleted?: boolean } = {}): Promise<Configuration[]> {
    return HttpConfigStore.list(
      await this.call('GET', this.configs(componentId), undefined, { isDeleted: options.isDeleted ? '1' : '0' }),
      configurationFromWire,
    );
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

  async updateConfiguration(
    componentId: string,
    configId: string,
    input: UpdateConfigurationInput,
  ): Promise<Configuration> {
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
    return configurationFromWire(
      await this.call('PUT', this.configs(componentId, `/${enc(configId)}/state`), body([['state', state]])),
    );
  }

  async deleteConfiguration(componentId: string, configId: string): Promise<void> {
    await this.call('DELETE', this.configs(componentId, `/${enc(configId)}`));
  }

  async restoreConfiguration(componentId: string, configId: string): Promise<Configuration> {
    return configurationFromWire(
      await this.call('POST', this.configs(componentId, `/${enc(configId)}/restore`), body([])),
    );
  }

  async listConfigurationVersions(
    componentId: string,
    configId: string,
    options: VersionListOptions = {},
  ): Promise<ConfigVersionItem[]> {
    const list = await this.call(
      'GET',
      this.configs(componentId, `/${enc(configId)}/versions`),
      undefined,
      HttpConfigStore.versionQuery(options),
    );
    return HttpConfigStore.list(list, versionItemFromWire);
  }

  async getConfigurationVersion(componentId: string, configId: string, version: number): Promise<ConfigVersionDetail> {
    return versionDetailFromWire(
      await this.call('GET', this.configs(componentId, `/${enc(configId)}/versions/${version}`)),
    );
  }

  async rollbackConfiguration(
    componentId: string,
    configId: string,
    version: number,
    changeDescription?: string,
  ): Promise<{ version: number }> {
    const result = await this.call(
      'POST',
      this.configs(componentId, `/${enc(configId)}/versions/${version}/rollback`),
      body([['changeDescription', changeDescription]]),
    );
    return { version: Number(isJsonObject(result) ? result.get('version') : NaN) };
  }

  async copyConfiguration(
    componentId: string,
    configId: string,
    version: number,
    input: CopyConfigurationInput,
  ): Promise<Configuration> {
    const payload = body([
      ['name', input.name],
      ['description', input.description],
      ['changeDescription', input.changeDescription],
    ]);
    const result = await this.call(
      'POST',
      this.configs(componentId, `/${enc(configId)}/versions/${version}/create`),
      payload,
    );
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
    return rowFromWire(
      await this.call('PUT', this.rows(componentId, configId, `/${enc(rowId)}/state`), body([['state', state]])),
    );
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
      rowId === null
        ? this.updateConfigurationState(componentId, configId, state)
        : this.updateRowState(componentId, configId, rowId, state);
    for (const [i, { rowId, state }] of writes.entries()) {
      try {
        await save(rowId, state);
      } catch (failure) {
        if (i === 0 && failure instanceof StoreError) throw failure;
        const undo = writes
          .slice(0, failure instanceof StoreError ? i : i + 1)
          .map((w, j) => ({ owner: w.rowId, state: previous[j] }));
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
    await this.call(
      'DELETE',
      this.rows(componentId, configId, `/${enc(rowId)}`),
      changeDescription === undefined ? undefined : body([['changeDescription', changeDescription]]),
    );
  }

  async listRowVersions(
    componentId: string,
    configId: string,
    rowId: string,
    options: VersionListOptions = {},
  ): Promise<RowVersion[]> {
    const list = await this.call(
      'GET',
      this.rows(componentId, configId, `/${enc(rowId)}/versions`),
      undefined,
      HttpConfigStore.versionQuery(options),
    );
    return HttpConfigStore.list(list, rowVersionFromWire);
  }

  async getRowVersion(componentId: string, configId: string, rowId: string, version: number): Promise<RowVersion> {
    return rowVersionFromWire(
      await this.call('GET', this.rows(componentId, configId, `/${enc(rowId)}/versions/${version}`)),
    );
  }

  async rollbackRow(
    componentId: string,
    configId: string,
    rowId: string,
    version: number,
    changeDescription?: string,
  ): Promise<Row> {
    return rowFromWire(
      await this.call(
        'POST',
        this.rows(componentId, configId, `/${enc(rowId)}/versions/${version}/rollback`),
        body([['changeDescription', changeDescription]]),
      ),
    );
  }

  async copyRow(
    componentId: string,
    configId: string,
    rowId: string,
    version: number,
    options: { targetConfigId?: string; changeDescription?: string } = {},
  ): Promise<Row> {
    const payload = body([
      ['targetConfigId', options.targetConfigId],
      ['changeDescription', options.changeDescription],
    ]);
    return rowFromWire(
      await this.call('POST', this.rows(componentId, configId, `/${enc(rowId)}/versions/${version}/create`), payload),
    );
  }

  async addMetadata(
    componentId: string,
    configId: string,
    metadata: Array<{ key: string; value: string }>,
  ): Promise<ConfigMetadataItem[]> {
    const payload = body([
      [
        'metadata',
        metadata.map((m) =>
          body([
            ['key', m.key],
            ['value', m.value],
          ]),
        ),
      ],
    ]);
    return HttpConfigStore.list(
      await this.call('POST', this.configs(componentId, `/${enc(configId)}/metadata`), payload),
      configMetadataFromWire,
    );
  }

  async listMetadata(componentId: string, configId: string): Promise<ConfigMetadataItem[]> {
    return HttpConfigStore.list(
      await this.call('GET', this.configs(componentId, `/${enc(configId)}/metadata`)),
      configMetadataFromWire,
    );
  }

  async deleteMetadata(componentId: string, configId: string, metadataId: string): Promise<void> {
    await this.call('DELETE', this.configs(componentId, `/${enc(configId)}/metadata/${enc(metadataId)}`));
  }
}
