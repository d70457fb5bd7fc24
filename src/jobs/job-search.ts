import type { JobMode } from './job-record.js';
import type { JobStatus } from './statuses.js';

/** The filters of `GET /search/jobs` (every one optional; lists match any of their values). */
export interface JobSearch {
  ids?: number[];
  runIds?: string[];
  branchIds?: string[];
  tokenIds?: number[];
  tokenDescriptions?: string[];
  componentIds?: string[];
  configIds?: string[];
  /** jobs whose configRowIds name any of these */
  configRowIds?: string[];
  modes?: JobMode[];
  statuses?: JobStatus[];
  /** '' = jobs without a parent run; else the jobs below that run (its children and theirs) */
  parentRunId?: string;
  /** jobs whose parent run is one of these (direct children only; an index finds them) */
  parentRunIds?: string[];
  /** ISO 8601 UTC bounds, inclusive */
  createdFrom?: string;
  createdTo?: string;
  startedFrom?: string;
  startedTo?: string;
  endedFrom?: string;
  endedTo?: string;
  durationFrom?: number;
  durationTo?: number;
  /** standard, orchestrationContainer, phaseContainer (another type matches nothing) */
  types?: string[];
  /** true: nothing can match */
  none?: boolean;
  limit: number;
  offset: number;
  sortBy: JobSortKey;
  sortOrder: 'asc' | 'desc';
}

/** `sortBy` values and the column each sorts on. */
export const SORT_COLUMNS = {
  id: 'id',
  runId: 'run_id',
  createdTime: 'created',
  startTime: 'started',
  endTime: 'ended',
  durationSeconds: 'duration_seconds',
  status: 'status',
  component: 'component_id',
  config: 'config_id',
} as const;
export type JobSortKey = keyof typeof SORT_COLUMNS;

export const DEFAULT_SEARCH_LIMIT = 100;
/** a page of more jobs than this is refused (each job is a few KB of JSON) */
export const MAX_SEARCH_LIMIT = 500;
