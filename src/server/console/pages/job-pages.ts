import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { groupThousands } from '../../../common/text.js';
import { newJob } from '../../../jobs/job-request.js';
import type { JobEvent, QueueJob } from '../../../jobs/job-record.js';
import { DEFAULT_SEARCH_LIMIT, type JobSearch } from '../../../jobs/job-search.js';
import { isFinished, JOB_STATUSES } from '../../../jobs/statuses.js';
import { StoreError } from '../../../store/store-error.js';
import { pageData, renderPage, userOf, type ConsolePages } from '../console-context.js';

/** jobs a list page shows */
export const JOBS_PER_PAGE = 50;
/** loaded tables whose row counts a job's page looks up (the rest are listed without) */
const TABLES_COUNTED = 50;
/** log lines a job page shows at once (newest), and each "Older" page */
export const LOG_LINES = 200;
const MAX_OFFSET = 100_000;

type Query = Record<string, string | undefined>;

function jobIdOf(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw new StoreError(404, '', 'There is no such job.');
  return Number(text);
}

function pageNumber(text: string | undefined): number {
  const n = Number(text ?? '1');
  return Number.isInteger(n) && n >= 1 ? Math.min(n, MAX_OFFSET / JOBS_PER_PAGE) : 1;
}

/** How a job came to be: a flow's (a container or task), a schedule's tick, or asked for. */
function triggerOf(job: QueueJob, scheduled: ReadonlySet<number>): 'flow' | 'schedule' | 'manual' {
  if (job.type !== 'standard' || job.orchestrationJobId !== null) return 'flow';
  return scheduled.has(job.id) ? 'schedule' : 'manual';
}

/** A job as a list row shows it. */
function jobRow(job: QueueJob, scheduled: ReadonlySet<number>) {
  return {
    id: job.id,
    status: job.status,
    componentId: job.componentId,
    configId: job.configId,
    rows: job.configRowIds,
    trigger: triggerOf(job, scheduled),
    created: job.created,
    duration: job.durationSeconds,
    running: !isFinished(job.status),
  };
}

/** The list's filters from the query: only known statuses; ids and times as given (bounded). */
function filtersOf(query: Query) {
  const status = JOB_STATUSES.find((s) => s === query.status);
  const config = query.config?.slice(0, 255) || undefined;
  const component = query.component?.slice(0, 255) || undefined;
  const since = query.since && !Number.isNaN(Date.parse(query.since)) ? new Date(query.since).toISOString() : undefined;
  return { status, config, component, since, sinceInput: query.since?.slice(0, 40), page: pageNumber(query.page) };
}

/** A log position `jobId:seq` from a query; undefined when absent or malformed. */
function position(text: string | undefined): { jobId: number; seq: number } | undefined {
  const match = /^(\d{1,15}):(\d{1,15})$/.exec(text ?? '');
  return match ? { jobId: Number(match[1]), seq: Number(match[2]) } : undefined;
}

const lineView = (e: JobEvent) => ({ created: e.created, level: e.level, message: e.message });

/** The Jobs list, a job's page with its live log, and its actions. */
export function jobPages(app: FastifyInstance, pages: ConsolePages): void {
  const { queue, schedules, queueHooks, backend } = pages;

  const requireQueue = () => {
    if (!queue) throw new StoreError(404, '', 'This gex serves no job queue (start it with a store that has one).');
    return queue;
  };

  app.get<{ Querystring: Query }>('/jobs', async (request, reply) => {
    const jobs = requireQueue();
    const { projectId } = userOf(request).token;
    const filters = filtersOf(request.query);
    const search: JobSearch = {
      limit: JOBS_PER_PAGE + 1,
      offset: (filters.page - 1) * JOBS_PER_PAGE,
      sortBy: 'id',
      sortOrder: 'desc',
      ...(filters.status ? { statuses: [filters.status] } : {}),
      ...(filters.config ? { configIds: [filters.config] } : {}),
      ...(filters.component ? { componentIds: [filters.component] } : {}),
      ...(filters.since ? { createdFrom: filters.since } : {}),
    };
    const found = await jobs.search(projectId, search);
    const shown = found.slice(0, JOBS_PER_PAGE);
    const scheduled = (await schedules?.firedJobIds(shown.map((j) => j.id))) ?? new Set<number>();
    const rows = shown.map((job) => jobRow(job, scheduled));
    return renderPage(request, reply, 'jobs', 'Jobs', {
      title: 'Jobs',
      jobs: rows,
      filters,
      statuses: JOB_STATUSES,
      hasNext: found.length > JOBS_PER_PAGE,
      live: rows.some((r) => r.running),
      query: new URLSearchParams(
        Object.entries({
          status: filters.status,
          config: filters.config,
          component: filters.component,
          since: request.query.since,
        }).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''),
      ).toString(),
    });
  });

  /** What a job's heading and facts show (the page's, and each live log fragment's to refresh them). */
  const jobFacts = async (request: FastifyRequest, job: QueueJob) => {
    const tables = backend.tables(userOf(request).token);
    const loaded = job.result?.output.tables.map((t) => t.id) ?? [];
    const rows = await Promise.all(
      loaded.slice(0, TABLES_COUNTED).map((id) =>
        tables.table(id).then(
          (t) => t.rowsCount,
          () => undefined,
        ),
      ),
    );
    const scheduled = (await schedules?.firedJobIds([job.id])) ?? new Set<number>();
    return {
      ...jobRow(job, scheduled),
      runId: job.runId,
      mode: job.mode,
      started: job.started,
      ended: job.ended,
      message: job.result?.error?.message ?? job.result?.message,
      errorType: job.result?.error?.type,
      errorCode: job.result?.error?.code,
      configVersion: job.result?.configVersion ?? null,
      tables: loaded.map((id, i) => ({ id, rows: rows[i] === undefined ? undefined : groupThousands(rows[i]) })),
      attempt: job.attempt,
      type: job.type,
    };
  };

  app.get<{ Params: { id: string }; Querystring: Query }>('/jobs/:id', async (request, reply) => {
    const jobs = requireQueue();
    const { projectId } = userOf(request).token;
    // read before the log (JobRepository.logMarker): a line written after it changes the marker
    const marker = (await jobs.logMarker()) ?? '';
    const job = await jobs.get(projectId, jobIdOf(request.params.id));
    if (!job) throw new StoreError(404, '', 'There is no such job in this project.');
    const [parent] = job.parentRunId ? await jobs.search(projectId, { ...listAll, runIds: [job.parentRunId] }) : [];
    // its children and theirs (a flow's phases and their tasks), each level found by index
    const below = (runIds: string[]) =>
      runIds.length === 0 ? [] : jobs.search(projectId, { ...listAll, parentRunIds: runIds, sortOrder: 'asc' });
    const first = await below([job.runId]);
    const children = [...first, ...(await below(first.map((c) => c.runId)))].sort((a, b) => a.id - b.id);
    const older = position(request.query.before);
    const newest = await jobs.events(projectId, {
      jobId: job.id,
      newestFirst: true,
      limit: LOG_LINES + 1,
      ...(older ? { atMost: { jobId: job.id, seq: older.seq - 1 } } : {}),
    });
    const lines = newest.slice(0, LOG_LINES).reverse();
    const last = lines.at(-1);
    return renderPage(request, reply, 'job', 'Jobs', {
      title: `Job ${job.id}`,
      job: await jobFacts(request, job),
      parent: parent ? jobRow(parent, new Set()) : undefined,
      children: children.map((c) => ({ ...jobRow(c, new Set()), taskId: c.orchestrationTaskId, type: c.type })),
      lines: lines.map(lineView),
      olderFrom: newest.length > LOG_LINES ? `${job.id}:${lines[0].seq}` : undefined,
      paged: older !== undefined,
      cursor: `${job.id}:${last?.seq ?? older?.seq ?? 0}`,
      marker,
      live: !isFinished(job.status) && older === undefined,
    });
  });

  // the live log: the lines after `after` and the job's heading again; nothing (204) while no log
  // has changed since `marker` (a job's end writes its last lines, so its heading follows)
  app.get<{ Params: { id: string }; Querystring: Query }>('/jobs/:id/log', async (request, reply) => {
    const jobs = requireQueue();
    const { projectId } = userOf(request).token;
    const id = jobIdOf(request.params.id);
    const marker = await jobs.logMarker();
    if (marker !== null && request.query.marker === marker) return reply.code(204).send();
    const job = await jobs.get(projectId, id);
    if (!job) throw new StoreError(404, '', 'There is no such job in this project.');
    const after = position(request.query.after);
    const lines = await jobs.events(projectId, {
      jobId: id,
      limit: LOG_LINES,
      ...(after ? { sinceSeq: after.seq } : {}),
    });
    const last = lines.at(-1);
    return reply.type('text/html; charset=utf-8').send(
      await reply.viewAsync(
        'job-log-lines',
        pageData(request, 'Jobs', {
          id,
          job: await jobFacts(request, job),
          lines: lines.map(lineView),
          cursor: `${id}:${last?.seq ?? after?.seq ?? 0}`,
          marker: marker ?? '',
          live: !isFinished(job.status) || lines.length === LOG_LINES,
        }),
      ),
    );
  });

  app.post<{ Params: { id: string } }>('/jobs/:id/kill', async (request, reply) => {
    const jobs = requireQueue();
    const { projectId } = userOf(request).token;
    const job = await jobs.kill(projectId, jobIdOf(request.params.id));
    if (!job) throw new StoreError(404, '', 'There is no such job in this project.');
    queueHooks.killed(job);
    return reply.redirect(`/console/jobs/${job.id}`, 303);
  });

  app.post<{ Params: { id: string } }>('/jobs/:id/run', async (request, reply) => {
    const jobs = requireQueue();
    const { token, store } = userOf(request);
    const job = await jobs.get(token.projectId, jobIdOf(request.params.id));
    if (!job) throw new StoreError(404, '', 'There is no such job in this project.');
    const again = await jobs.create(
      await newJob(
        {
          componentId: job.componentId,
          configId: job.configId,
          configRowIds: job.configRowIds,
          mode: job.mode === 'forceRun' ? 'forceRun' : 'run',
        },
        token,
        store,
      ),
    );
    queueHooks.created(again);
    return redirectTo(reply, `/console/jobs/${again.id}`);
  });
}

const listAll: JobSearch = { limit: DEFAULT_SEARCH_LIMIT, offset: 0, sortBy: 'id', sortOrder: 'desc' };

function redirectTo(reply: FastifyReply, url: string): FastifyReply {
  return reply.redirect(url, 303);
}
