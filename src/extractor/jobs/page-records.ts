import type { JsonValue } from '../../json/index.js';
import type { JobConfig } from '../config/job-config.js';
import type { HttpRequest, HttpResponse } from '../http/types.js';
import type { RecordRecipe } from '../output/spool.js';
import { findRecords, type FoundData } from '../response/data-field.js';
import { decodeResponse } from '../response/decode-response.js';
import { applyResponseFilter } from '../response/response-filter.js';

/** The records of a decoded response: found at the job's `dataField`, then filtered (`responseFilter`). */
export function pageRecords(decoded: JsonValue, job: JobConfig, compatLevel: number): FoundData {
  const found = findRecords(decoded, job.dataField);
  const records = applyResponseFilter(found.records, job.responseFilter, job.responseFilterDelimiter, compatLevel);
  return records === found.records ? found : { ...found, records };
}

/** Stands for the request in the (unreachable) error messages of a body decoded once already. */
const QUEUED: HttpRequest = { method: 'GET', url: '(a queued page)', headers: [] };

/**
 * A job's way from a response body to the records the parser got: the same decoding and the same
 * steps as the page took when it was fetched, so the records found again are equal to those.
 * Nothing else shapes a page's records (injected columns are queued beside the body).
 */
export class PageRecipe implements RecordRecipe {
  constructor(
    private readonly job: JobConfig,
    private readonly ignoreErrors: number[],
    private readonly compatLevel: number,
  ) {}

  records(body: Buffer, status: number): JsonValue[] {
    const response: HttpResponse = { status, statusMessage: '', headers: {}, body, attempts: 1 };
    return pageRecords(decodeResponse(response, QUEUED, this.ignoreErrors), this.job, this.compatLevel).records;
  }
}
