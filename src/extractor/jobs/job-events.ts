import type { Logger } from '../../common/logger.js';
import type { JsonValue } from '../../json/index.js';
import type { HttpRequest } from '../http/types.js';
import type { Paginator, Stop } from '../pagination/paginator.js';
import type { Placeholder } from '../children/placeholders.js';
import type { JobConfig } from '../config/job-config.js';
import type { PageSource } from '../output/spool.js';
import type { JobInstance } from './job-instance.js';

/**
 * One child job for one parent record: its placeholder combinations run one after another and
 * share one copy of the parent's paginator (a stop condition may leave it mid-way for the next
 * combination, as in Generic Extractor). The unit that may be fetched ahead of its turn.
 */
export interface ChildTask {
  job: JobConfig;
  parent: JobInstance;
  record: JsonValue;
  placeholders: Placeholder[];
  paginator: Paginator;
  /** its place in Generic Extractor's depth-first order: compared element by element */
  order: number[];
  /** its events, once started */
  stream?: JobEventStream;
}

/** What runs for a page's records, in order: a child task, a warning to log, or the error a sequential run stops at. */
export type ChildEntry = { task: ChildTask } | { warning: string } | { error: unknown };

/** A job instance begins (a top-level job, or a child job for one placeholder combination). */
export interface InstanceStarted {
  kind: 'start';
  instance: JobInstance;
  /** the instance's logger: every line names its job and endpoint */
  logger: Logger;
  /** the job as logs show it: its dataType, with the endpoint when that differs */
  label: string;
  /** the paginator's description, e.g. "pagenum (page=1.., limit=100)" */
  pagination: string;
  /** pages of this instance fetched in parallel at most (1: one by one) */
  parallelPages: number;
}

/** A page of the current instance: fetched, decoded, its records found and its child runs listed. */
export interface PageFetched {
  kind: 'page';
  request: Pick<HttpRequest, 'method' | 'url'>;
  status: number;
  bytes: number;
  durationMs: number;
  data: JsonValue[];
  /** the response `data` was found in, and how: the parser may queue it instead of `data` */
  source?: PageSource;
  /** the dataField warning of this page, if any */
  warning?: string;
  /** whether the warning is news (see FoundData): else it is a debug line */
  warningIsNews?: boolean;
  /** records the instance will have in all, when its paginator knows (the progress line's ETA) */
  expectedRecords?: number;
  /** what runs for this page's records before the instance's next page, in Generic Extractor's order */
  children: ChildEntry[];
}

/** The current instance ended: its paginator stopped, or a page repeated the previous one. */
export interface InstanceEnded {
  kind: 'end';
  stop: Stop;
  /** 1 when a fetched page ended it without being written (a repeated page) */
  fetches: number;
}

/** The producer failed: the consumer throws this error when it gets here, as a sequential run would. */
export interface TaskFailed {
  kind: 'error';
  error: unknown;
}

/** Every instance of the task has ended. */
export interface TaskDone {
  kind: 'done';
}

export type ConfigJobEvent = InstanceStarted | PageFetched | InstanceEnded | TaskFailed | TaskDone;

/** A stream that was closed (its run failed or ended): the producer stops at its next fetch. */
export class StreamClosed extends Error {
  constructor() {
    super('the job stream was closed');
  }
}

/**
 * The events of one job task, from its producer (which fetches) to its consumer (which writes, in
 * order). The consumer decides how far the producer may fetch: with `ahead` 0 a page is requested
 * only when the consumer asks for the next event (and has therefore finished the previous page and
 * its child jobs) — exactly Generic Extractor's sequence; with `ahead` N the producer keeps up to N
 * fetched pages ready. Events are counted in fetches, so a repeated page that is never written
 * still frees its fetch.
 */
export class JobEventStream {
  private readonly buffer: ConfigJobEvent[] = [];
  private consumerWaiting: (() => void) | undefined;
  private producerWaiting: (() => void) | undefined;
  /** fetches the producer may have started */
  private allowed: number;
  /** fetches the producer has started */
  private started = 0;
  /** fetches accounted for by events the consumer has taken */
  private taken = 0;
  private closed = false;

  constructor(private readonly ahead: number) {
    this.allowed = ahead;
  }

  /** Producer: adds an event. */
  push(event: ConfigJobEvent): void {
    if (this.closed) return;
    this.buffer.push(event);
    this.wake('consumer');
  }

  /** Producer: waits until one more fetch is allowed; throws StreamClosed once the stream is closed. */
  async beforeFetch(): Promise<void> {
    while (this.started >= this.allowed) {
      if (this.closed) throw new StreamClosed();
      await new Promise<void>((resolve) => (this.producerWaiting = resolve));
    }
    if (this.closed) throw new StreamClosed();
    this.started++;
  }

  /** Consumer: the next event, letting the producer fetch what it needs for it. */
  async next(): Promise<ConfigJobEvent> {
    while (this.buffer.length === 0) {
      this.allow(this.taken + 1);
      await new Promise<void>((resolve) => (this.consumerWaiting = resolve));
    }
    const event = this.buffer.shift()!;
    if (event.kind === 'page') this.taken++;
    else if (event.kind === 'end') this.taken += event.fetches;
    if (this.ahead > 0) this.allow(this.taken + this.ahead);
    return event;
  }

  /** Consumer: the next page will be needed (no child job comes first): fetch it now. */
  fetchNext(): void {
    this.allow(this.taken + 1);
  }

  /** Stops the producer at its next fetch; events pushed from now on are dropped. */
  close(): void {
    this.closed = true;
    this.buffer.length = 0;
    this.wake('producer');
  }

  private allow(fetches: number): void {
    if (fetches <= this.allowed) return;
    this.allowed = fetches;
    this.wake('producer');
  }

  private wake(side: 'consumer' | 'producer'): void {
    const resolve = side === 'consumer' ? this.consumerWaiting : this.producerWaiting;
    if (side === 'consumer') this.consumerWaiting = undefined;
    else this.producerWaiting = undefined;
    resolve?.();
  }
}
