import type { Logger } from '../common/logger.js';
import { displayText } from '../common/log-text.js';
import { groupThousands, plural } from '../common/text.js';
import { deepEqual, isJsonObject, isScalar, type JsonObject, type JsonValue } from '../json/index.js';
import { phpArrayMerge, phpEmpty, phpJsonRoundTrip, toPhpArrayMap } from '../php/index.js';
import { compileRecursionFilter } from './children/recursion-filter.js';
import {
  fillEndpoint,
  inheritResolved,
  parentColumns,
  parsePlaceholders,
  placeholderCombinations,
  type ResolvedPlaceholder,
} from './children/placeholders.js';
import type { ApiSettings } from './config/api-settings.js';
import type { JobConfig } from './config/job-config.js';
import { evaluateParams, userScriptError, type FunctionContexts, type UserFunctions } from './functions/user-functions.js';
import type { HttpClient } from './http/http-client.js';
import { buildHttpRequest } from './http/request-builder.js';
import type { RecordParser } from './output/record-parser.js';
import { Stop, type PageRequest, type Paginator, type StopCode } from './pagination/paginator.js';
import { findRecords } from './response/data-field.js';
import { decodeResponse } from './response/decode-response.js';
import { applyResponseFilter } from './response/response-filter.js';
import { PageFetcher } from './page-fetcher.js';
import type { RunProgress } from './run-progress.js';

export interface JobRunContext {
  api: ApiSettings;
  client: HttpClient;
  parser: RecordParser;
  logger: Logger;
  progress: RunProgress;
  compatLevel: number;
  functions: UserFunctions;
  /** `attr` (the configuration without jobs) and `time` (previousStart, currentStart) */
  contexts: FunctionContexts;
  /** hides secrets in error messages that quote a response */
  redact?: (text: string) => string;
  /** the run's stop signal: checked before each page */
  signal?: AbortSignal;
}

export interface JobResult {
  pages: number;
  records: number;
  stopReason: string;
  /** why it stopped, for machines: a cap (`forceStop.pages`, …) or a natural end (`underflow`, …) */
  stoppedBy: StopCode;
}

/** One run of a job definition: a top-level job, or a child job for one parent record. */
interface JobInstance {
  job: JobConfig;
  /** endpoint with placeholders filled */
  endpoint: string;
  /** extra columns of its rows: userData, parent_* */
  injected: JsonObject;
  /** records that led here: [parent's, grandparent's, …] */
  ancestors: JsonValue[];
  /** placeholder values children inherit */
  resolved: ResolvedPlaceholder[];
}

/**
 * Runs jobs as GE does (docs/ge-behaviour.md#run-order): for each page — request, decode, find the records,
 * filter, hand them to the parser, then run every child job for every record of the page (before
 * the next page), then ask the paginator for the next request. A page identical to the previous
 * one of the same job instance ends it without being written.
 */
export class JobRunner {
  constructor(private readonly ctx: JobRunContext) {}

  /** A top-level job with the configuration's `userData` and a fresh paginator. */
  runTopLevel(job: JobConfig, configUserData: JsonObject, paginator: Paginator): Promise<JobResult> {
    return this.run({ job, endpoint: job.endpoint, injected: topLevelUserData(job, configUserData, this.ctx), ancestors: [], resolved: [] }, paginator);
  }

  /** `userData` of a job: an object, or a scalar as `job_parent_id`; values may be functions. */
  private jobUserData(job: JobConfig): JsonObject {
    return evaluateUserData(job.userData, 'job_parent_id', this.ctx);
  }

  private async run(instance: JobInstance, paginator: Paginator): Promise<JobResult> {
    const { api, client } = this.ctx;
    const { job } = instance;
    // every line of this job instance (its retries included) says which job and endpoint it is about
    const logger = this.ctx.logger.child({ job: job.dataType, endpoint: instance.endpoint });
    const template = jobTemplate(job, instance.endpoint, this.ctx);
    // configuration text, and a child's endpoint holds values from responses: one safe token for logs and the terminal
    const label = displayText(job.dataType === instance.endpoint ? job.dataType : `${job.dataType} (${instance.endpoint})`);
    logger.info({ method: job.method }, `Job '${label}': ${job.method} ${displayText(instance.endpoint)}, ${paginator.describe(template)}`);
    const fetcher = new PageFetcher(client, (page) => buildHttpRequest(page, job.headers, api), paginator, template, logger);
    if (fetcher.parallel) logger.debug(`Job '${label}': up to ${client.concurrency.maximum} pages in flight`);
    try {
      return await this.fetchPages(instance, paginator, template, label, fetcher, logger);
    } finally {
      fetcher.close();
    }
  }

  private async fetchPages(instance: JobInstance, paginator: Paginator, template: PageRequest, label: string, fetcher: PageFetcher, logger: Logger): Promise<JobResult> {
    const { api, parser, progress } = this.ctx;
    const { job } = instance;
    let request = paginator.first(template);
    let previous: JsonValue | undefined;
    let pages = 0;
    let records = 0;
    const finish = (stop: Stop): JobResult => {
      progress.expectRecords(undefined);
      const { reason: stopReason, code: stoppedBy } = stop;
      logger.info({ pages, records, stopReason, stoppedBy }, `Job '${label}' finished: ${plural(pages, 'page')}, ${plural(records, 'record')}; ${stop.describe()}`);
      return { pages, records, stopReason, stoppedBy };
    };
    for (;;) {
      this.ctx.signal?.throwIfAborted();
      const started = Date.now();
      const { request: httpRequest, response } = await fetcher.fetch(request);
      const decoded = decodeResponse(response, httpRequest, api.ignoreErrors, this.ctx.redact);
      // compared as GE does (PHP serialize: order and int/float matter), stopping at the first difference
      if (previous !== undefined && deepEqual(decoded, previous)) {
        paginator.reset();
        return finish(new Stop(`the response of page ${pages + 1} matched the previous one`, 'duplicatePage'));
      }
      previous = decoded;
      const found = findRecords(decoded, job.dataField);
      if (found.warning) logger.warn({ page: pages + 1 }, `Job '${label}': ${found.warning}`);
      const data = applyResponseFilter(found.records, job.responseFilter, job.responseFilterDelimiter, this.ctx.compatLevel);
      // The page is analysed before the next request may leave: when the parser refuses it (a type
      // conflict, a bad mapping) the run ends where GE's does, without a request GE never sends.
      parser.process(data, job.dataType, instance.injected);
      // Without children the next request is known now: send it before waiting for this page's
      // rows to reach the disk (same requests, same order, one in flight).
      const hasChildren = job.children.length > 0;
      let next = hasChildren ? undefined : paginator.next(template, { request, response: decoded, data });
      if (next !== undefined && !(next instanceof Stop)) fetcher.prefetch(next);
      await parser.settle();
      pages++;
      records += data.length;
      // a limitStop knows where the job ends: the progress line shows an ETA for the rest of it
      const expected = paginator.expectedRecords?.();
      const before = progress.records - (records - data.length);
      progress.expectRecords(expected === undefined ? undefined : before + Math.max(expected, records));
      progress.page(label, data.length);
      if (logger.isLevelEnabled('debug')) {
        const durationMs = Date.now() - started;
        logger.debug(
          { page: pages, method: httpRequest.method, url: httpRequest.url, status: response.status, records: data.length, bytes: response.body.length, durationMs },
          `Job '${label}' page ${groupThousands(pages)}: ${httpRequest.method} ${httpRequest.url} -> ${response.status}, ` +
            `${plural(data.length, 'record')}, ${plural(response.body.length, 'byte')}, ${groupThousands(durationMs)} ms`,
        );
      }
      if (hasChildren) {
        await this.runChildren(instance, data, paginator);
        next = paginator.next(template, { request, response: decoded, data });
      }
      if (next instanceof Stop) return finish(next);
      request = next!;
    }
  }

  /**
   * Child jobs of one page: for each child definition, for each record that passes its
   * recursionFilter, one child run per placeholder combination (none, only a warning, when the
   * child has no placeholders). The combinations of one record
   * share one copy of the parent's paginator, reset.
   */
  private async runChildren(parent: JobInstance, data: JsonValue[], paginator: Paginator): Promise<void> {
    for (const child of parent.job.children) {
      const filter = child.recursionFilter ? compileRecursionFilter(child.recursionFilter) : null;
      const own = parsePlaceholders(child.placeholders);
      for (const record of data) {
        if (filter && !filter(record)) continue;
        // GE never runs a child without placeholders of its own: it warns once per parent record
        if (own.length === 0) {
          this.ctx.logger.warn(`No 'placeholders' set for '${child.endpoint}'`);
          continue;
        }
        const ancestors = [record, ...parent.ancestors];
        const childPaginator = paginator.clone();
        for (const combination of placeholderCombinations(own, ancestors, this.ctx.functions)) {
          const resolved = inheritResolved(parent.resolved, combination);
          const injected = this.jobUserData(child);
          for (const [k, v] of parentColumns(resolved)) injected.set(k, v);
          await this.run({ job: child, endpoint: fillEndpoint(child.endpoint, resolved), injected, ancestors, resolved }, childPaginator);
        }
      }
    }
  }
}

/** The columns a top-level job adds to its records: GE's array_merge(config userData, job userData) when the config has any (integer keys renumbered). */
export function topLevelUserData(job: JobConfig, configUserData: JsonObject, ctx: Pick<JobRunContext, 'functions' | 'contexts'>): JsonObject {
  const own = evaluateUserData(job.userData, 'job_parent_id', ctx);
  return configUserData.size > 0 ? phpArrayMerge(configUserData, own) : own;
}

/** The request a job asks for before pagination varies it: its endpoint, evaluated params and method. */
export function jobTemplate(job: JobConfig, endpoint: string, ctx: Pick<JobRunContext, 'functions' | 'contexts'>): PageRequest {
  return {
    endpoint,
    params: evaluateParams(job.params, ctx.functions, ctx.contexts),
    method: job.method,
    // with `multiple` pagination a child picks its own scroller (or the default)
    scroller: job.scroller,
  };
}

/**
 * `userData` (config or job): an object gives its entries, a list its items under the keys 0, 1, …
 * (a PHP array either way), a non-empty scalar becomes `{<scalarKey>: value}`; values may be user
 * functions (context attr, time) and must end up scalar.
 * GE builds it with UserFunction::build, so its numbers take PHP's JSON round trip (1e15 → int).
 */
export function evaluateUserData(value: JsonValue | undefined, scalarKey: string, ctx: Pick<JobRunContext, 'functions' | 'contexts'>): JsonObject {
  if (value === undefined || phpEmpty(value)) return new Map();
  const entries: JsonObject = isJsonObject(value) || Array.isArray(value) ? toPhpArrayMap(value) : new Map([[scalarKey, value]]);
  const out: JsonObject = new Map();
  for (const [k, v] of entries) {
    const evaluated = isJsonObject(v) ? ctx.functions.evaluate(v, ctx.contexts) : phpJsonRoundTrip(v);
    if (evaluated !== null && !isScalar(evaluated)) throw userScriptError(`userData '${k}' must be a scalar value, not an object or list`);
    out.set(k, evaluated);
  }
  return out;
}
