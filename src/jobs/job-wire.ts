import { fromPlain, type JsonObject, type JsonValue } from '../json/index.js';
import type { JobRunCounts } from './job-metrics.js';
import type { QueueJob } from './job-record.js';
import { isFinished } from './statuses.js';

/** `2026-01-31T12:00:00.000Z` → `2026-01-31T12:00:00+00:00`, as Keboola writes times (ATOM). */
export function wireTime(iso: string | null): string | null {
  return iso === null ? null : iso.replace(/\.\d{3}Z$/, '+00:00');
}

/**
 * A job's `metrics`: Keboola's shape where it has one — `storage` (the bytes of the CSV files the
 * run read from and wrote to its tables) and `backend` (gex has no backend sizes: nulls) — and
 * gex's own counts under `gex` (docs/jobs.md#what-a-job-moved).
 */
export function metricsToWire(counts: JobRunCounts): JsonObject {
  return new Map<string, JsonValue>([
    [
      'storage',
      new Map<string, JsonValue>([
        ['inputTablesBytesSum', counts.inputBytes],
        ['outputTablesBytesSum', counts.outputBytes],
      ]),
    ],
    [
      'backend',
      new Map<string, JsonValue>([
        ['size', null],
        ['containerSize', null],
        ['context', null],
      ]),
    ],
    ['gex', fromPlain(counts)],
  ]);
}

/**
 * The job object of the Queue API: every key always present, with the types Keboola's PHP client
 * checks and PHP's empty arrays (`[]`, not `{}` or null) where Keboola sends them. `base` is the
 * queue's URL without a trailing slash.
 */
export function jobToWire(job: QueueJob, base: string): JsonObject {
  const empty: JsonValue[] = [];
  // the counts stored with the result are the job's metrics
  const { counts, ...result } = job.result ?? {};
  const entries: Array<[string, JsonValue]> = [
    ['id', String(job.id)],
    ['runId', job.runId],
    ['parentRunId', job.parentRunId],
    [
      'project',
      new Map<string, JsonValue>([
        ['id', String(job.projectId)],
        ['name', job.projectName],
      ]),
    ],
    [
      'token',
      new Map<string, JsonValue>([
        ['id', String(job.tokenId)],
        ['description', job.tokenDescription],
      ]),
    ],
    ['status', job.status],
    ['desiredStatus', job.desiredStatus],
    ['mode', job.mode],
    ['component', job.componentId],
    ['config', job.configId],
    ['configData', job.configData === null || job.configData === undefined ? empty : fromPlain(job.configData)],
    ['configRowIds', [...job.configRowIds]],
    ['tag', job.tag],
    ['createdTime', wireTime(job.created)],
    ['startTime', wireTime(job.started)],
    ['endTime', wireTime(job.ended)],
    ['durationSeconds', job.durationSeconds],
    ['result', job.result === null ? [] : fromPlain(result)],
    ['usageData', []],
    ['isFinished', isFinished(job.status)],
    ['url', `${base}/jobs/${job.id}`],
    ['branchId', job.branchId],
    ['variableValuesId', null],
    ['variableValuesData', new Map<string, JsonValue>([['values', []]])],
    ['backend', []],
    ['executor', null],
    ['metrics', counts ? metricsToWire(counts) : []],
    ['behavior', new Map<string, JsonValue>([['onError', null]])],
    ['parallelism', null],
    ['type', job.type],
    ['orchestrationJobId', job.orchestrationJobId],
    ['orchestrationTaskId', job.orchestrationTaskId],
    ['onlyOrchestrationTaskIds', null],
    ['previousJobId', null],
  ];
  return new Map(entries);
}
