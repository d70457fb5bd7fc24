import type { JobConfig } from '../config/job-config.js';
import { compareOrder } from './child-task.js';
import type { ChildTask } from './job-events.js';

/** The child tasks of one child definition: how many may run ahead, which do, which wait. */
interface Lane {
  limit: number;
  running: number;
  /** registered, not started, in depth-first order */
  waiting: ChildTask[];
}

/**
 * Decides when child tasks start. Each child definition has a lane of `concurrency` tasks that
 * may be started and not yet consumed; waiting tasks start in Generic Extractor's depth-first
 * order, so the ones needed next are fetched first. The consumer's own task always starts when it
 * gets to it (`demand`), whatever the lane holds, so nothing waits on itself. With a limit of 1 a
 * task starts when the previous one of its lane was consumed: a sequential run.
 */
export class ChildScheduler {
  private readonly lanes = new Map<JobConfig, Lane>();

  constructor(
    /** tasks of a child definition that may run ahead at once (its effective `concurrency`) */
    private readonly limitOf: (job: JobConfig) => number,
    /** starts a task's producer; `ahead` pages it may fetch before they are consumed */
    private readonly start: (task: ChildTask, ahead: number) => void,
    /** pages a task running ahead may keep ready */
    private readonly pagesAhead: number,
  ) {}

  /** Tasks of a fetched page, in order: they may start now. */
  register(tasks: ChildTask[]): void {
    const touched = new Set<Lane>();
    for (const task of tasks) {
      const lane = this.laneOf(task.job);
      insertSorted(lane.waiting, task);
      touched.add(lane);
    }
    for (const lane of touched) this.pump(lane);
  }

  /** The consumer has reached `task`: it starts now if it has not. */
  demand(task: ChildTask): void {
    if (task.stream) return;
    const lane = this.laneOf(task.job);
    const at = lane.waiting.indexOf(task);
    if (at >= 0) lane.waiting.splice(at, 1);
    this.launch(lane, task);
  }

  /** The consumer is done with `task`: its place goes to the next waiting one. */
  release(task: ChildTask): void {
    const lane = this.laneOf(task.job);
    lane.running--;
    this.pump(lane);
  }

  private pump(lane: Lane): void {
    while (lane.running < lane.limit && lane.waiting.length > 0) this.launch(lane, lane.waiting.shift()!);
  }

  private launch(lane: Lane, task: ChildTask): void {
    lane.running++;
    this.start(task, lane.limit > 1 ? this.pagesAhead : 0);
  }

  private laneOf(job: JobConfig): Lane {
    let lane = this.lanes.get(job);
    if (!lane) {
      lane = { limit: this.limitOf(job), running: 0, waiting: [] };
      this.lanes.set(job, lane);
    }
    return lane;
  }
}

/** Inserts after every task that comes before it (tasks mostly arrive in order: the scan is short). */
function insertSorted(list: ChildTask[], task: ChildTask): void {
  let i = list.length;
  while (i > 0 && compareOrder(list[i - 1].order, task.order) > 0) i--;
  list.splice(i, 0, task);
}
