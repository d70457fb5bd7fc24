import type { Database, SqlExecutor } from '../../store/sql/database.js';
import type { QueueJob } from '../job-record.js';
import { SELECT, toJob, type Row } from '../job-rows.js';
import { longRunEvent, phaseIdOf } from './event-match.js';
import { enqueueEvents } from './notification-outbox.js';

/** how often the workers' monitor looks for jobs running longer than usual */
export const LONG_RUN_CHECK_MS = 10_000;
/** the usual duration: the average of this many last successful jobs of the configuration (Keboola's 20) */
export const USUAL_OF_LAST = 20;
/** running jobs looked at per check (the oldest first) */
const JOBS_PER_CHECK = 1000;
const LONG_RUN_EVENTS = "('job-processing-long', 'phase-job-processing-long')";

/**
 * The usual duration of `job`'s configuration in seconds: the average of its last successful
 * jobs of the same kind (a phase's: the same phase of the same flow); undefined when none ended.
 */
async function usualDuration(tx: SqlExecutor, job: QueueJob): Promise<number | undefined> {
  const phase = phaseIdOf(job);
  const rows = await tx.all<Row>(
    `SELECT duration_seconds, config_data FROM queue_jobs WHERE project_id = ? AND component_id = ? AND config_id = ?
      AND branch_id = ? AND type = ? AND status = 'success' AND duration_seconds IS NOT NULL ORDER BY id DESC LIMIT ?`,
    [
      job.projectId,
      job.componentId,
      job.configId,
      job.branchId,
      job.type,
      phase === undefined ? USUAL_OF_LAST : USUAL_OF_LAST * 10,
    ],
  );
  const same =
    phase === undefined
      ? rows
      : rows
          .filter((r) => phaseIdOf({ type: 'phaseContainer', configData: JSON.parse(String(r.config_data)) }) === phase)
          .slice(0, USUAL_OF_LAST);
  if (same.length === 0) return undefined;
  return same.reduce((sum, r) => sum + Number(r.duration_seconds), 0) / same.length;
}

/**
 * Writes a `job-processing-long` (`phase-job-processing-long`) event for every running job of a
 * project subscribed to one that has run longer than its configuration's usual duration by what
 * the subscription's `durationOvertimePercentage` filter asks (any overrun without one). Once per
 * job and subscription, whichever monitor of whichever machine sees it first (the outbox's unique
 * index). How many events were written.
 */
export async function checkLongRuns(db: Database, now = new Date()): Promise<number> {
  const running = await db.all<Row>(
    `${SELECT} WHERE j.status = 'processing' AND j.type IN ('standard', 'phaseContainer') AND j.started IS NOT NULL
      AND j.project_id IN (SELECT project_id FROM notification_subscriptions WHERE event IN ${LONG_RUN_EVENTS})
      ORDER BY j.started LIMIT ?`,
    [JOBS_PER_CHECK],
  );
  let written = 0;
  for (const row of running) {
    const job = toJob(row);
    written += await db.transaction(async (tx) => {
      const usual = await usualDuration(tx, job);
      if (usual === undefined) return 0;
      const current = Math.max(0, (now.getTime() - Date.parse(job.started!)) / 1000);
      // durations are whole seconds: a configuration that usually takes none counts as one
      const average = Math.max(usual, 1);
      if (current <= average) return 0;
      const overtime = Math.round((current / average - 1) * 1000) / 1000;
      return enqueueEvents(tx, job, longRunEvent(job), now, {
        averageDuration: Math.round(usual * 10) / 10,
        currentDuration: Math.round(current),
        overtime,
      });
    });
  }
  return written;
}
