import type { AttemptRecord, DeliveryStatus, NotificationOutbox } from './notification-outbox.js';

/** attempts ended within this long are recorded in one transaction */
const RECORD_DELAY_MS = 10;
/** at most this many attempts in one transaction (recorded at once when reached) */
const RECORD_BATCH = 64;

type RecordedState = DeliveryStatus | 'retrying';

interface Waiting {
  record: AttemptRecord;
  resolve(state: RecordedState): void;
  reject(error: unknown): void;
}

/**
 * Records a sender's attempts in batches: what ends within RECORD_DELAY_MS is one transaction
 * (NotificationOutbox.recordAll), not one each. A busy sender ends hundreds of attempts a second
 * beside the job ends that share the store; each caller still learns its own event's state. A
 * process killed before a batch is written loses only those records: the events are taken again
 * when their leases end (at most one extra delivery of each, as for any attempt in flight).
 */
export class AttemptRecorder {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly outbox: Pick<NotificationOutbox, 'recordAll'>,
    private readonly now: () => Date,
  ) {}

  /** Records one attempt (with the others of its batch); the event's state after it. */
  record(record: AttemptRecord): Promise<RecordedState> {
    return new Promise<RecordedState>((resolve, reject) => {
      this.waiting.push({ record, resolve, reject });
      if (this.waiting.length >= RECORD_BATCH) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), RECORD_DELAY_MS);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return;
    this.outbox
      .recordAll(
        batch.map((w) => w.record),
        this.now(),
      )
      .then(
        (states) => batch.forEach((w, i) => w.resolve(states[i])),
        (error: unknown) => batch.forEach((w) => w.reject(error)),
      );
  }
}
