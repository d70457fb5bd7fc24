import type { Logger } from '../../common/logger.js';
import { displayText } from '../../common/log-text.js';
import { deepEqual, type JsonValue } from '../../json/index.js';
import { childCombinations, fillEndpoint, parentColumns } from '../children/placeholders.js';
import type { ApiSettings } from '../config/api-settings.js';
import type { HttpClient } from '../http/http-client.js';
import { buildHttpRequest } from '../http/request-builder.js';
import { Stop, type PageRequest, type Paginator } from '../pagination/paginator.js';
import { decodeResponse } from '../response/decode-response.js';
import type { JobConfig } from '../config/job-config.js';
import { childEntries } from './child-task.js';
import type { ChildScheduler } from './child-scheduler.js';
import type { ChildTask, JobEventStream } from './job-events.js';
import { evaluateUserData, jobTemplate, type FunctionScope, type JobInstance } from './job-instance.js';
import { PageFetcher } from './page-fetcher.js';
import { PageRecipe, pageRecords } from './page-records.js';

export interface ProducerContext extends FunctionScope {
  api: ApiSettings;
  client: HttpClient;
  logger: Logger;
  compatLevel: number;
  /** hides secrets in error messages that quote a response */
  redact?: (text: string) => string;
  /** the run's stop signal: checked before each page */
  signal?: AbortSignal;
}

/**
 * Fetches job instances: requests, decodes, finds and filters the records of each page, lists the
 * page's child tasks and asks the paginator for the next request — and hands each step to the
 * consumer as an event (job-events.ts). It never writes, logs a page or runs a child: the consumer
 * does, in Generic Extractor's order, however far ahead this has fetched.
 */
export class JobProducer {
  /** per job: how the parser finds a queued page's records in its body again */
  private readonly recipes = new Map<JobConfig, PageRecipe>();

  constructor(
    private readonly ctx: ProducerContext,
    private readonly scheduler: ChildScheduler,
    /** cancels requests of a job tree whose run failed (only when tasks run ahead) */
    private readonly treeSignal?: AbortSignal,
  ) {}

  /** A top-level job: one instance. */
  async produceRoot(instance: JobInstance, paginator: Paginator, stream: JobEventStream): Promise<void> {
    await this.produce(stream, async () => this.produceInstance(instance, paginator, stream, [0]));
  }

  /**
   * A child task: each placeholder combination of its record (own and inherited values), one after
   * another, on its shared paginator.
   */
  async produceChild(task: ChildTask, stream: JobEventStream): Promise<void> {
    await this.produce(stream, async () => {
      const { job, parent, record } = task;
      const ancestors = [record, ...parent.ancestors];
      const combinations = childCombinations(task.placeholders, parent.resolved, ancestors, this.ctx.functions);
      for (const [index, resolved] of combinations.entries()) {
        const injected = evaluateUserData(job.userData, 'job_parent_id', this.ctx);
        for (const [k, v] of parentColumns(resolved)) injected.set(k, v);
        const instance: JobInstance = {
          job,
          endpoint: fillEndpoint(job.endpoint, resolved),
          injected,
          ancestors,
          resolved,
        };
        await this.produceInstance(instance, task.paginator, stream, [...task.order, index]);
      }
    });
  }

  private async produce(stream: JobEventStream, body: () => Promise<void>): Promise<void> {
    try {
      await body();
      stream.push({ kind: 'done' });
    } catch (error) {
      stream.push({ kind: 'error', error });
    }
  }

  private recipeOf(job: JobConfig): PageRecipe {
    let recipe = this.recipes.get(job);
    if (!recipe) this.recipes.set(job, (recipe = new PageRecipe(job, this.ctx.api.ignoreErrors, this.ctx.compatLevel)));
    return recipe;
  }

  private async produceInstance(
    instance: JobInstance,
    paginator: Paginator,
    stream: JobEventStream,
    order: number[],
  ): Promise<void> {
    const { api, client } = this.ctx;
    const { job } = instance;
    // every line of this job instance (its retries included) says which job and endpoint it is about
    const logger = this.ctx.logger.child({ job: job.dataType, endpoint: instance.endpoint });
    const template = jobTemplate(job, instance.endpoint, this.ctx);
    // configuration text, and a child's endpoint holds values from responses: one safe token for logs and the terminal
    const label = displayText(
      job.dataType === instance.endpoint ? job.dataType : `${job.dataType} (${instance.endpoint})`,
    );
    const fetcher = new PageFetcher(client, (page) => buildHttpRequest(page, job.headers, api), paginator, template, {
      pages: api.concurrency,
      logger,
      signal: this.treeSignal,
    });
    stream.push({
      kind: 'start',
      instance,
      logger,
      label,
      pagination: paginator.describe(template),
      parallelPages: fetcher.parallelPages,
    });
    try {
      let request: PageRequest = paginator.first(template);
      let previous: JsonValue | undefined;
      for (let page = 0; ; page++) {
        await stream.beforeFetch();
        this.ctx.signal?.throwIfAborted();
        const started = Date.now();
        const { request: httpRequest, response } = await fetcher.fetch(request);
        const decoded = decodeResponse(response, httpRequest, api.ignoreErrors, this.ctx.redact);
        // compared as GE does (PHP serialize: order and int/float matter), stopping at the first difference
        if (previous !== undefined && deepEqual(decoded, previous)) {
          paginator.reset();
          stream.push({
            kind: 'end',
            stop: new Stop(`the response of page ${page + 1} matched the previous one`, 'duplicatePage'),
            fetches: 1,
          });
          return;
        }
        previous = decoded;
        const found = pageRecords(decoded, job, this.ctx.compatLevel);
        const data = found.records;
        const children = childEntries(instance, data, paginator, [...order, page]);
        // a paginator that fails on this page fails after the page and its children, as in GE
        let next: PageRequest | Stop | { failed: unknown };
        try {
          next = paginator.next(template, { request, response: decoded, data });
        } catch (failed) {
          next = { failed };
        }
        stream.push({
          kind: 'page',
          request: { method: httpRequest.method, url: httpRequest.url },
          status: response.status,
          bytes: response.body.length,
          durationMs: Date.now() - started,
          data,
          source: { body: response.body, status: response.status, recipe: this.recipeOf(job) },
          warning: found.warning,
          warningIsNews: found.news,
          expectedRecords: paginator.expectedRecords?.(),
          children,
        });
        if (children.length > 0)
          this.scheduler.register(children.flatMap((entry) => ('task' in entry ? [entry.task] : [])));
        if ('failed' in next) throw next.failed;
        if (next instanceof Stop) {
          stream.push({ kind: 'end', stop: next, fetches: 0 });
          return;
        }
        request = next;
      }
    } finally {
      fetcher.close();
    }
  }
}
