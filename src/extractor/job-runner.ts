import type { Logger } from '../common/logger.js';
import { plural } from '../common/text.js';
import { deepEqual, type JsonObject, type JsonValue } from '../php-compat/index.js';
import type { ApiSettings } from './config/api-settings.js';
import type { JobConfig } from './config/job-config.js';
import type { HttpClient } from './http/http-client.js';
import { buildHttpRequest } from './http/request-builder.js';
import type { JsonParser } from './output/json-parser/json-parser.js';
import { Stop, type PageRequest, type Paginator } from './pagination/paginator.js';
import { findRecords } from './response/data-field.js';
import { decodeResponse } from './response/decode-response.js';
import { applyResponseFilter } from './response/response-filter.js';
import type { RunProgress } from './run-progress.js';

export interface JobRunContext {
  api: ApiSettings;
  client: HttpClient;
  parser: JsonParser;
  logger: Logger;
  progress: RunProgress;
  compatLevel: number;
}

export interface JobResult {
  pages: number;
  records: number;
  stopReason: string;
}

/**
 * Runs one job: request, decode, find the records, filter, hand them to the parser, ask the
 * paginator for the next request — until it stops. A page identical to the previous one (whole
 * decoded response, as GE compares it) ends the job without being written.
 */
export async function runJob(job: JobConfig, paginator: Paginator, ctx: JobRunContext, injected: JsonObject = new Map()): Promise<JobResult> {
  const { api, client, parser, logger, progress } = ctx;
  const template: PageRequest = { endpoint: job.endpoint, params: job.params, method: job.method };
  const label = job.dataType;
  logger.info(`Job '${label}': ${job.method} ${job.endpoint}, ${paginator.describe(template)}`);
  let request = paginator.first(template);
  let previous: JsonValue | undefined;
  let pages = 0;
  let records = 0;
  for (;;) {
    const httpRequest = buildHttpRequest(request, job.headers, api);
    const started = Date.now();
    const response = await client.send(httpRequest);
    const decoded = decodeResponse(response, httpRequest, api.ignoreErrors);
    // compared as GE does (PHP serialize: order and int/float matter), stopping at the first difference
    if (previous !== undefined && deepEqual(decoded, previous)) {
      paginator.reset();
      return finish(`the response of page ${pages + 1} matched the previous one`);
    }
    previous = decoded;
    const found = findRecords(decoded, job.dataField);
    if (found.warning) logger.warn(`Job '${label}': ${found.warning}`);
    const data = applyResponseFilter(found.records, job.responseFilter, job.responseFilterDelimiter, ctx.compatLevel);
    parser.process(data, job.dataType, injected);
    await parser.settle();
    pages++;
    records += found.records.length;
    progress.page(label, found.records.length);
    logger.debug(
      `Job '${label}' page ${pages}: ${httpRequest.method} ${httpRequest.url} -> ${response.status}, ` +
        `${plural(found.records.length, 'record')}, ${response.body.length} bytes, ${Date.now() - started} ms`,
    );
    const next = paginator.next(template, { request, response: decoded, data });
    if (next instanceof Stop) return finish(next.reason);
    request = next;
  }

  function finish(stopReason: string): JobResult {
    logger.info(`Job '${label}' finished: ${plural(pages, 'page')}, ${plural(records, 'record')}; stopped: ${stopReason}`);
    return { pages, records, stopReason };
  }
}
