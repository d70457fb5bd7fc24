import type { JobConfig } from '../config/job-config.js';
import { compareOrder } from './child-task.js';
import type { ChildTask } from './job-events.js';

/** The child tasks of one child definition: how many may run ahead, which do, which wait. */
interface Lane {
  limit: number;
  running: number;
  /** registered, not started, in depth-first order */
  waiting: WaitingTasks;
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
      lane.waiting.insert(task);
      touched.add(lane);
    }
    for (const lane of touched) this.pump(lane);
  }

  /** The consumer has reached `task`: it starts now if it has not. */
  demand(task: ChildTask): void {
    if (task.stream) return;
    const lane = this.laneOf(task.job);
    lane.waiting.remove(task);
    this.launch(lane, task);
  }

  /** The consumer is done with `task`: its place goes to the next waiting one. */
  release(task: ChildTask): void {
    const lane = this.laneOf(task.job);
    lane.running--;
    this.pump(lane);
  }

  private pump(lane: Lane): void {
    for (let task = lane.waiting.first(); task && lane.running < lane.limit; task = lane.waiting.first()) {
      lane.waiting.remove(task);
      this.launch(lane, task);
    }
  }

  private launch(lane: Lane, task: ChildTask): void {
    lane.running++;
    this.start(task, lane.limit > 1 ? this.pagesAhead : 0);
  }

  private laneOf(job: JobConfig): Lane {
    let lane = this.lanes.get(job);
    if (!lane) {
      lane = { limit: this.limitOf(job), running: 0, waiting: new WaitingTasks() };
      this.lanes.set(job, lane);
    }
    return lane;
  }
}

/**
 * Tasks waiting to start, in depth-first order. A page may list many thousands of child runs:
 * tasks mostly arrive in order and leave from the front, so both are O(1) here (an array's
 * `shift` is not: 100,000 of them take seconds).
 */
export class WaitingTasks {
  private tasks: ChildTask[] = [];
  private head = 0;

  get size(): number {
    return this.tasks.length - this.head;
  }

  first(): ChildTask | undefined {
    return this.tasks[this.head];
  }

  /** After every task that comes before it (the scan from the back is short: arrivals are mostly in order). */
  insert(task: ChildTask): void {
    let i = this.tasks.length;
    while (i > this.head && compareOrder(this.tasks[i - 1].order, task.order) > 0) i--;
    if (i === this.tasks.length) this.tasks.push(task);
    else this.tasks.splice(i, 0, task);
  }

  /** Removes a task (the first one, nearly always); nothing when it is not waiting. */
  remove(task: ChildTask): void {
    if (this.tasks[this.head] === task) this.head++;
    else {
      const at = this.tasks.indexOf(task, this.head);
      if (at < 0) return;
      this.tasks.splice(at, 1);
    }
    // drop the consumed front once it is most of the array: amortised O(1) per task
    if (this.head > 1024 && this.head * 2 > this.tasks.length) {
      this.tasks = this.tasks.slice(this.head);
      this.head = 0;
    }
  }
}
