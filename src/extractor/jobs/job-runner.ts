import { displayText } from '../../common/log-text.js';
import { groupThousands, plural } from '../../common/text.js';
import type { JsonObject } from '../../json/index.js';
import type { JobConfig } from '../config/job-config.js';
import type { RecordParser } from '../output/record-parser.js';
import type { Paginator, Stop, StopCode } from '../pagination/paginator.js';
import type { RunProgress } from '../run-progress.js';
import type { ChildEntry, InstanceStarted, JobEventStream, PageFetched } from './job-events.js';
import { topLevelUserData } from './job-instance.js';
import { JobTree, type TreeContext } from './job-tree.js';

export interface JobRunContext extends TreeContext {
  parser: RecordParser;
  progress: RunProgress;
}

export interface ConfigJobResult {
  pages: number;
  records: number;
  stopReason: string;
  /** why it stopped, for machines: a cap (`forceStop.pages`, …) or a natural end (`underflow`, …) */
  stoppedBy: StopCode;
}

/** The instance being consumed: what its log lines and result need. */
interface Current {
  started: InstanceStarted;
  pages: number;
  records: number;
  /** the child job's totals when it is a child run (its lines are debug lines then) */
  child: ChildJobTotals | undefined;
}

/** What the runs of one child job did in a top-level job: its one info line. */
interface ChildJobTotals {
  job: JobConfig;
  parentRecords: number;
  runs: number;
  requests: number;
  records: number;
  /** the time its requests took, summed (parallel ones overlap) */
  requestMs: number;
}

/**
 * Runs jobs as GE does (docs/ge-behaviour.md#run-order): for each page — request, decode, find the
 * records, filter, hand them to the parser, then run every child job for every record of the page
 * (before the next page), then the next page. The fetching is done by a JobProducer, which may
 * fetch child jobs ahead (child `concurrency`); this consumer writes, logs and counts in that
 * order, so tables, state and the set of requests are those of a sequential run.
 */
export class JobRunner {
  /** per child job of the top-level job running, in the order they first ran */
  private childTotals = new Map<JobConfig, ChildJobTotals>();

  constructor(private readonly ctx: JobRunContext) {}

  /** A top-level job with the configuration's `userData` and a fresh paginator. */
  async runTopLevel(job: JobConfig, configUserData: JsonObject, paginator: Paginator): Promise<ConfigJobResult> {
    const injected = topLevelUserData(job, configUserData, this.ctx);
    const tree = new JobTree(this.ctx, hasParallelChildren(job, this.ctx.childConcurrency));
    // with children fetched ahead, the parent's next page is too: their lane never drains at a page's end
    const root = tree.open(tree.parallel ? 1 : 0);
    void tree.producer.produceRoot(
      { job, endpoint: job.endpoint, injected, ancestors: [], resolved: [] },
      paginator,
      root,
    );
    this.childTotals = new Map();
    try {
      const results = await this.consume(root, tree);
      this.logChildTotals();
      return results[0];
    } finally {
      tree.close();
    }
  }

  /** Writes a task's instances in order; returns their results. */
  private async consume(stream: JobEventStream, tree: JobTree): Promise<ConfigJobResult[]> {
    const results: ConfigJobResult[] = [];
    let current: Current | undefined;
    for (;;) {
      const event = await stream.next();
      switch (event.kind) {
        case 'start':
          current = { started: event, pages: 0, records: 0, child: this.childRun(event) };
          this.logStart(event, current.child !== undefined);
          break;
        case 'page':
          await this.writePage(current!, event, stream);
          await this.runChildren(event.children, tree);
          break;
        case 'end':
          if (current!.child) current!.child.requests += event.fetches;
          results.push(this.finish(current!, event.stop));
          break;
        case 'error':
          throw event.error;
        case 'done':
          return results;
      }
    }
  }

  /** The totals a child run adds to, or undefined for a top-level run. */
  private childRun({ instance }: InstanceStarted): ChildJobTotals | undefined {
    if (instance.ancestors.length === 0) return undefined;
    const totals = this.totalsOf(instance.job);
    totals.runs++;
    return totals;
  }

  private totalsOf(job: JobConfig): ChildJobTotals {
    let totals = this.childTotals.get(job);
    if (!totals) {
      totals = { job, parentRecords: 0, runs: 0, requests: 0, records: 0, requestMs: 0 };
      this.childTotals.set(job, totals);
    }
    return totals;
  }

  /** A child job runs once per parent record: its runs are debug lines, and this is its info line. */
  private logChildTotals(): void {
    for (const { job, parentRecords, runs, requests, records, requestMs } of this.childTotals.values()) {
      const label = displayText(job.dataType === job.endpoint ? job.dataType : `${job.dataType} (${job.endpoint})`);
      const perRecord = runs === parentRecords ? '' : ` (${plural(runs, 'run')})`;
      this.ctx.logger.info(
        {
          job: job.dataType,
          endpoint: job.endpoint,
          parentRecords,
          runs,
          requests,
          records,
          durationMs: Math.round(requestMs),
        },
        `Child job '${label}' finished: ran for ${plural(parentRecords, 'parent record')}${perRecord}, ` +
          `${plural(requests, 'request')}, ${plural(records, 'record')}; ` +
          `its requests took ${(requestMs / 1000).toFixed(1)} s`,
      );
    }
  }

  private logStart({ instance, logger, label, pagination, parallelPages }: InstanceStarted, child: boolean): void {
    const { job } = instance;
    const line = `Job '${label}': ${job.method} ${displayText(instance.endpoint)}, ${pagination}`;
    if (child) logger.debug({ method: job.method }, line);
    else logger.info({ method: job.method }, line);
    if (parallelPages > 1) logger.debug(`Job '${label}': up to ${parallelPages} pages in flight`);
  }

  private async writePage(current: Current, page: PageFetched, stream: JobEventStream): Promise<void> {
    const { parser, progress } = this.ctx;
    const { instance, logger, label } = current.started;
    if (page.warning) {
      // GE warns on every empty page; on a later page or with an empty answer it is the normal end
      const line = `Job '${label}': ${page.warning}`;
      if (page.warningIsNews && current.pages === 0) logger.warn({ page: current.pages + 1 }, line);
      else logger.debug({ page: current.pages + 1 }, line);
    }
    // The page is analysed before the next request may leave: when the parser refuses it (a type
    // conflict, a bad mapping) the run ends where GE's does, without a request GE never sends.
    parser.process(page.data, instance.job.dataType, instance.injected, page.source);
    // Without child runs the next request is known now: send it before waiting for this page's
    // rows to reach the disk (same requests, same order).
    if (page.children.length === 0) stream.fetchNext();
    await parser.settle();
    current.pages++;
    current.records += page.data.length;
    if (current.child) {
      current.child.requests++;
      current.child.records += page.data.length;
      current.child.requestMs += page.durationMs;
    }
    // a limitStop knows where the job ends: the progress line shows an ETA for the rest of it
    const expected = page.expectedRecords;
    const before = progress.records - (current.records - page.data.length);
    progress.expectRecords(expected === undefined ? undefined : before + Math.max(expected, current.records));
    progress.page(label, page.data.length);
    if (logger.isLevelEnabled('debug')) {
      const { method, url } = page.request;
      logger.debug(
        {
          page: current.pages,
          method,
          url,
          status: page.status,
          records: page.data.length,
          bytes: page.bytes,
          durationMs: page.durationMs,
        },
        `Job '${label}' page ${groupThousands(current.pages)}: ${method} ${url} -> ${page.status}, ` +
          `${plural(page.data.length, 'record')}, ${plural(page.bytes, 'byte')}, ${groupThousands(page.durationMs)} ms`,
      );
    }
  }

  /** The child runs of a page, in order; each task is started if it has not run ahead, and consumed whole. */
  private async runChildren(entries: ChildEntry[], tree: JobTree): Promise<void> {
    for (const entry of entries) {
      if ('warning' in entry) this.ctx.logger.warn(entry.warning);
      else if ('error' in entry) throw entry.error;
      else {
        this.totalsOf(entry.task.job).parentRecords++;
        tree.scheduler.demand(entry.task);
        await this.consume(entry.task.stream!, tree);
        tree.consumed(entry.task);
      }
    }
  }

  private finish(current: Current, stop: Stop): ConfigJobResult {
    const { pages, records } = current;
    const { logger, label } = current.started;
    const { reason: stopReason, code: stoppedBy } = stop;
    this.ctx.progress.expectRecords(undefined);
    const line = `Job '${label}' finished: ${plural(pages, 'page')}, ${plural(records, 'record')}; ${stop.describe()}`;
    if (current.child) logger.debug({ pages, records, stopReason, stoppedBy }, line);
    else logger.info({ pages, records, stopReason, stoppedBy }, line);
    return { pages, records, stopReason, stoppedBy };
  }
}

/** Whether any child below `job` runs ahead (a concurrency above 1). */
function hasParallelChildren(job: JobConfig, concurrency: (job: JobConfig) => number): boolean {
  return job.children.some((child) => concurrency(child) > 1 || hasParallelChildren(child, concurrency));
}
