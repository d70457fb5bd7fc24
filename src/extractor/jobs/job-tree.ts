import { setMaxListeners } from 'node:events';
import type { JobConfig } from '../config/job-config.js';
import { ChildScheduler } from './child-scheduler.js';
import type { ChildTask } from './job-events.js';
import { JobEventStream } from './job-events.js';
import { JobProducer, type ProducerContext } from './job-producer.js';

export interface TreeContext extends ProducerContext {
  /** child tasks of a child definition fetched ahead at once (its effective `concurrency`) */
  childConcurrency: (job: JobConfig) => number;
}

/**
 * Pages a child task running ahead may keep fetched before they are written: enough for a child
 * of a few pages to be ready when its turn comes, little enough to bound memory
 * (concurrency × this many pages per child definition).
 */
const PAGES_AHEAD = 2;

/**
 * What the run of one top-level job shares: its producer, the scheduler of its child tasks and the
 * streams started and not yet consumed. With children fetched ahead, a failed run cancels their
 * requests in flight and stops their producers; a sequential run never has any running ahead.
 */
export class JobTree {
  readonly producer: JobProducer;
  readonly scheduler: ChildScheduler;
  private readonly live = new Set<JobEventStream>();
  private readonly controller: AbortController | undefined;

  constructor(
    ctx: TreeContext,
    readonly parallel: boolean,
  ) {
    this.controller = parallel ? new AbortController() : undefined;
    // one listener per request and job instance in flight: as many as the concurrency allows
    if (this.controller) setMaxListeners(0, this.controller.signal);
    this.scheduler = new ChildScheduler(
      ctx.childConcurrency,
      (task, ahead) => {
        task.stream = this.open(ahead);
        void this.producer.produceChild(task, task.stream);
      },
      PAGES_AHEAD,
    );
    this.producer = new JobProducer(ctx, this.scheduler, this.controller?.signal);
  }

  open(ahead: number): JobEventStream {
    const stream = new JobEventStream(ahead);
    this.live.add(stream);
    return stream;
  }

  /** The consumer is done with `task`: its stream is let go and its lane place freed. */
  consumed(task: ChildTask): void {
    this.live.delete(task.stream!);
    this.scheduler.release(task);
  }

  /** The run is over: whatever still runs ahead stops (nothing does after a success). */
  close(): void {
    this.controller?.abort();
    for (const stream of this.live) stream.close();
    this.live.clear();
  }
}
