/**
 * A top-level job in the run summary: how far it got and why it stopped. Child jobs are not
 * listed (one per parent record: a summary could not stay small), their stops are in the log.
 */
export interface JobRunSummary {
  /** the job's dataType (configuration text; JSON-encoded in the summary) */
  job: string;
  pages: number;
  records: number;
  /**
   * a cap (`forceStop.pages`, `forceStop.time`, `forceStop.volume`, `limitStop.count`,
   * `limitStop.field`) or a natural end (`underflow`, `emptyPage`, `total`, `nextPageFlag`,
   * `noNextPage`, `duplicatePage`, `noPagination`)
   */
  stoppedBy: string;
}

/** The summary's entries of an extraction's jobs (the human stop reasons stay in the log). */
export function jobRunSummaries(jobs: ReadonlyArray<JobRunSummary>): JobRunSummary[] {
  return jobs.map(({ job, pages, records, stoppedBy }) => ({ job, pages, records, stoppedBy }));
}
