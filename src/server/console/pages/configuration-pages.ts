import { diffLines } from 'diff';
import type { FastifyInstance } from 'fastify';
import { configJobKey } from '../../../jobs/job-reads.js';
import type { QueueJob } from '../../../jobs/job-record.js';
import type { QueueHooks } from '../../../jobs/job-platform.js';
import type { JobRepository } from '../../../jobs/job-repository.js';
import { newJob } from '../../../jobs/job-request.js';
import { cronTicks } from '../../../jobs/schedules/cron-tick.js';
import type { ScheduleRecord, ScheduleRepository } from '../../../jobs/schedules/schedule-repository.js';
import { isJsonObject, prettyExact, type JsonObject, type JsonValue } from '../../../json/index.js';
import { redactSecrets } from '../../../runner/stored-state.js';
import { StoreError } from '../../../store/store-error.js';
import type { ConfigStore } from '../../../store/config-store.js';
import type { ConfigurationSummaries, ConfigVersionDetail, Row, VersionRow } from '../../../store/types.js';
import type { ReadCache } from '../../operations/read-cache.js';
import { field, renderPage, userOf } from '../console-context.js';

/** versions a configuration's page lists (newest first) */
export const VERSIONS_SHOWN = 100;
/** configurations the Configurations list shows at once */
export const CONFIGURATIONS_PER_PAGE = 100;
/** pages beyond this are refused as absurd (a million configurations) */
const MAX_PAGE = 10_000;

type Params = { component: string; config: string };
type Query = Record<string, string | undefined>;

/** A `#` value that differs from the version before: the diff says it changed, never what it is. */
const CHANGED_SECRET = '[hidden, changed]';

/**
 * `value` as the console shows it: every scalar under a `#` key hidden (the store's ciphers, and
 * plain text it would encrypt). With `before`, one whose stored value differs from the one at the
 * same place there is shown as changed, so a diff still marks a changed secret.
 */
export function shownJson(value: JsonValue, before?: JsonValue): JsonValue {
  if (before === undefined) return redactSecrets(value);
  if (Array.isArray(value))
    return value.map((v, i) => shownJson(v, Array.isArray(before) ? (before[i] ?? null) : null));
  if (!isJsonObject(value)) return value;
  const out: JsonObject = new Map();
  for (const [key, v] of value) {
    const old = isJsonObject(before) ? before.get(key) : undefined;
    if (key.startsWith('#') && v !== null && !isJsonObject(v) && !Array.isArray(v))
      out.set(key, old === undefined || prettyExact(old) === prettyExact(v) ? '[hidden]' : CHANGED_SECRET);
    else out.set(key, shownJson(v, old ?? null));
  }
  return out;
}

const pretty = (value: JsonValue, before?: JsonValue) => prettyExact(shownJson(value, before));

/** Rows in the configuration's `rowsSortOrder`; rows it does not name follow in their stored order. */
function ordered<R extends { id: string }>(rows: readonly R[], sortOrder: readonly string[]): R[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const first = sortOrder.map((id) => byId.get(id)).filter((r): r is R => r !== undefined);
  const named = new Set(first.map((r) => r.id));
  return [...first, ...rows.filter((r) => !named.has(r.id))];
}

/** What a version holds that a person changes, as one JSON tree for the diff (rows in their order). */
function versionTree(version: ConfigVersionDetail): JsonObject {
  const row = (r: VersionRow): JsonValue =>
    new Map<string, JsonValue>([
      ['id', r.id],
      ['name', r.name],
      ['description', r.description],
      ['isDisabled', r.isDisabled],
      ['configuration', r.configuration],
    ]);
  return new Map<string, JsonValue>([
    ['name', version.name],
    ['description', version.description],
    ['isDisabled', version.isDisabled],
    ['configuration', version.configuration],
    ['rows', ordered(version.rows, version.rowsSortOrder).map(row)],
  ]);
}

export interface DiffLine {
  kind: 'added' | 'removed' | 'same';
  text: string;
}

/** Version `after` against `before` (none: everything added), line by line of their pretty JSON. */
export function versionDiff(before: ConfigVersionDetail | undefined, after: ConfigVersionDetail): DiffLine[] {
  const old = before ? versionTree(before) : undefined;
  const oldText = old ? pretty(old) : '';
  const newText = pretty(versionTree(after), old ?? undefined);
  const lines: DiffLine[] = [];
  for (const part of diffLines(oldText, newText)) {
    const kind = part.added ? 'added' : part.removed ? 'removed' : 'same';
    for (const text of part.value.replace(/\n$/, '').split('\n')) lines.push({ kind, text });
  }
  return lines;
}

/** The next run of each configuration some enabled schedule of the project runs. */
function nextRuns(schedules: readonly ScheduleRecord[], now: Date) {
  const ticks = new Map<string, Date | undefined | Error>();
  const next = new Map<string, { at?: string; cron: string; timeZone: string; scheduleId: number }>();
  for (const s of schedules) {
    const { cronTab, timezone, state, target } = s.definition;
    if (s.stopped !== null || state !== 'enabled') continue;
    const cron = `${cronTab}\n${timezone}`;
    if (!ticks.has(cron)) {
      try {
        ticks.set(cron, cronTicks(cronTab, timezone).nextAfter(now));
      } catch (error) {
        ticks.set(cron, error as Error);
      }
    }
    const tick = ticks.get(cron);
    const at = tick instanceof Date ? tick.toISOString() : undefined;
    const key = configJobKey(target.componentId, target.configurationId);
    const known = next.get(key);
    if (known?.at !== undefined && (at === undefined || known.at <= at)) continue;
    next.set(key, { ...(at ? { at } : {}), cron: cronTab, timeZone: timezone, scheduleId: s.id });
  }
  return next;
}

function pageOf(text: string | undefined): number {
  const n = Number(text ?? '1');
  return Number.isInteger(n) && n >= 1 ? Math.min(n, MAX_PAGE) : 1;
}

/** A page of the live configurations; a store without summaries lists everything and cuts. */
async function configurationSummaries(
  store: ConfigStore,
  page: { componentId?: string; limit: number; offset: number },
): Promise<ConfigurationSummaries> {
  if (store.listConfigurationSummaries) return store.listConfigurationSummaries(page);
  const all = (await store.listComponents())
    .filter((c) => page.componentId === undefined || c.component.id === page.componentId)
    .flatMap(({ component, configurations }) =>
      configurations.map((c) => ({
        componentId: component.id,
        id: c.id,
        name: c.name,
        isDisabled: c.isDisabled,
        version: c.version,
      })),
    );
  return { total: all.length, items: all.slice(page.offset, page.offset + page.limit) };
}

const jobView = (job: QueueJob | undefined) => job && { id: job.id, status: job.status, created: job.created };

function versionOf(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw new StoreError(404, '', 'There is no such version.');
  return Number(text);
}

const configUrl = (componentId: string, configId: string) =>
  `/console/configurations/${encodeURIComponent(componentId)}/${encodeURIComponent(configId)}`;

/** What these pages use of the console's parts (ConsolePages has them). */
export interface ConfigurationPagesParts {
  queue?: JobRepository;
  schedules?: ScheduleRepository;
  queueHooks: QueueHooks;
  reads?: ReadCache;
}

/** The Configurations list, a configuration's page (rows, state, versions and a diff) and its actions. */
export function configurationPages(app: FastifyInstance, pages: ConfigurationPagesParts): void {
  const { queue, schedules, queueHooks, reads } = pages;

  const scheduled = async (projectId: number) => nextRuns((await schedules?.list(projectId)) ?? [], new Date());

  app.get<{ Querystring: Query }>('/configurations', async (request, reply) => {
    const { token, store } = userOf(request);
    const component = request.query.component?.slice(0, 256) || undefined;
    const page = pageOf(request.query.page);
    // what the page reads of the store, reused while the store has not changed (as the API's bodies)
    const build = async () => {
      const { total, items } = await configurationSummaries(store, {
        ...(component === undefined ? {} : { componentId: component }),
        limit: CONFIGURATIONS_PER_PAGE,
        offset: (page - 1) * CONFIGURATIONS_PER_PAGE,
      });
      const componentIds = [...new Set(items.map((c) => c.componentId))];
      const [latest, scheduleList, components] = await Promise.all([
        queue?.latestOfConfigurations(
          token.projectId,
          items.map((c) => ({ componentId: c.componentId, configId: c.id })),
        ) ?? new Map<string, QueueJob>(),
        schedules?.list(token.projectId) ?? [],
        Promise.all(componentIds.map((id) => store.getComponent(id).catch(() => undefined))),
      ]);
      return { total, items, componentIds, latest, scheduleList, components };
    };
    const key = `console configurations ${token.projectId} ${page} ${component ?? ''}`;
    const read = reads
      ? await reads.value(key, build, (v) => JSON.stringify({ ...v, latest: [...v.latest] }).length)
      : await build();
    const { total, items, componentIds, latest, components } = read;
    const next = nextRuns(read.scheduleList, new Date());
    const byId = new Map(components.flatMap((c) => (c ? [[c.id, c] as const] : [])));
    return renderPage(request, reply, 'configurations', 'Configurations', {
      title: 'Configurations',
      total,
      page,
      pages: Math.max(1, Math.ceil(total / CONFIGURATIONS_PER_PAGE)),
      component,
      query: component === undefined ? '' : `component=${encodeURIComponent(component)}&`,
      components: componentIds.map((id) => ({
        id,
        name: byId.get(id)?.name ?? '',
        type: byId.get(id)?.type ?? '',
        configurations: items
          .filter((c) => c.componentId === id)
          .map((config) => {
            const key = configJobKey(id, config.id);
            return {
              id: config.id,
              name: config.name,
              isDisabled: config.isDisabled,
              version: config.version,
              lastJob: jobView(latest.get(key)),
              next: next.get(key),
            };
          }),
      })),
    });
  });

  app.get<{ Params: Params; Querystring: Query }>('/configurations/:component/:config', async (request, reply) => {
    const { token, store } = userOf(request);
    const { component, config: configId } = request.params;
    const config = await store.getConfiguration(component, configId);
    const chosen = versionOf(request.query.version) ?? config.version;
    const [versions, shown, before, latest, next] = await Promise.all([
      store.listConfigurationVersions(component, configId, { limit: VERSIONS_SHOWN }),
      store.getConfigurationVersion(component, configId, chosen),
      chosen > 1 ? store.getConfigurationVersion(component, configId, chosen - 1).catch(() => undefined) : undefined,
      queue?.latestOfConfigurations(token.projectId, [{ componentId: component, configId }]),
      scheduled(token.projectId),
    ]);
    const key = configJobKey(component, configId);
    return renderPage(request, reply, 'configuration', 'Configurations', {
      title: config.name || config.id,
      url: configUrl(component, configId),
      componentId: component,
      config: {
        id: config.id,
        name: config.name,
        description: config.description,
        version: config.version,
        isDisabled: config.isDisabled,
        json: pretty(config.configuration),
        state: pretty(config.state),
      },
      rows: ordered(config.rows, config.rowsSortOrder).map((r: Row) => ({
        id: r.id,
        name: r.name,
        description: r.description,
        isDisabled: r.isDisabled,
        json: pretty(r.configuration),
        state: pretty(r.state),
      })),
      versions: versions.map((v) => ({
        version: v.version,
        created: v.created,
        changeDescription: v.changeDescription,
        creator: v.creatorToken.description,
      })),
      moreVersions: versions.length >= VERSIONS_SHOWN,
      chosen,
      before: before?.version,
      diff: versionDiff(before, shown),
      lastJob: jobView(latest?.get(key)),
      next: next.get(key),
      copyName: `${config.name} (copy)`,
    });
  });

  app.post<{ Params: Params }>('/configurations/:component/:config/run', async (request, reply) => {
    if (!queue) throw new StoreError(404, '', 'This gex serves no job queue (start it with a store that has one).');
    const { token, store } = userOf(request);
    const { component, config } = request.params;
    const job = await queue.create(
      await newJob({ componentId: component, configId: config, configRowIds: [], mode: 'run' }, token, store),
    );
    queueHooks.created(job);
    return reply.redirect(`/console/jobs/${job.id}`, 303);
  });

  app.post<{ Params: Params; Body: unknown }>('/configurations/:component/:config/rollback', async (request, reply) => {
    const { store } = userOf(request);
    const { component, config } = request.params;
    const version = versionOf(field(request.body as never, 'version'));
    if (version === undefined) throw StoreError.validation('Which version to roll back to: the form names none.');
    const result = await store.rollbackConfiguration(component, config, version);
    return reply.redirect(`${configUrl(component, config)}?version=${result.version}`, 303);
  });

  app.post<{ Params: Params; Body: unknown }>('/configurations/:component/:config/copy', async (request, reply) => {
    const { store } = userOf(request);
    const { component, config } = request.params;
    const body = request.body as never;
    const version = versionOf(field(body, 'version'));
    if (version === undefined) throw StoreError.validation('Which version to copy: the form names none.');
    const name = field(body, 'name')?.trim();
    if (!name) throw StoreError.validation('The copy needs a name.');
    const copy = await store.copyConfiguration(component, config, version, { name });
    return reply.redirect(configUrl(component, copy.id), 303);
  });
}
