import type { SubscriptionEvent } from './subscription-input.js';

/**
 * What a notification says about its job: Keboola's webhook body (`{job, branch, project,
 * eventType}`) with what gex adds (the job's status, duration, error message; a long run's figures).
 * Written into the outbox with the job's end, so every attempt sends the same bytes; no secret is
 * in it (ids, names, times, the job's own message).
 */
export interface NotificationPayload {
  eventType: SubscriptionEvent;
  /** names this event; the same on every attempt and in the delivery id header */
  eventId: string;
  job: {
    id: string;
    /** the console's page of the job (absent when the process that sent it has no public URL) */
    url?: string;
    status: string;
    startTime: string | null;
    endTime: string | null;
    durationSeconds: number | null;
    component: { id: string; name: string };
    configuration: { id: string; name: string };
    /** the job's message; for a failed job its error */
    message: string;
    tasks: unknown[];
  };
  branch: { id: string };
  project: { id: string; name: string };
  /** a phase event's phase (a flow's phase container job) */
  phase?: { id: string; jobId: string };
  /**
   * job-processing-long (Keboola's names): the usual duration in seconds (the average of the
   * configuration's last successful jobs), how long it runs now, and the overrun as a fraction
   * (0.75: 75 % longer than usual)
   */
  averageDuration?: number;
  currentDuration?: number;
  durationOvertimePercentage?: number;
}

/** How one attempt ended: delivered, to be tried again later, or failed for good. */
export interface AttemptOutcome {
  outcome: 'delivered' | 'retry' | 'final';
  /** the HTTP status (webhook) or SMTP reply code (email), when there was an answer */
  statusCode: number | null;
  /** what happened, for the delivery record: no secret, at most a few hundred characters */
  message: string;
}
