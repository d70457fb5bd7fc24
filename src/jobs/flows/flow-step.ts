import type { FlowPhase, FlowTask, TaskRetry } from '../../store/flows/flow-model.js';
import { isFinished, type JobStatus } from '../statuses.js';
import { conditionHolds, type FinishedTask } from './condition-eval.js';
import type { FlowAction, FlowSnapshot, TaskAttempt } from './flow-snapshot.js';

/** The tasks of a phase this run runs: enabled, and in the subset when there is one. */
export function runnableTasks(snapshot: Pick<FlowSnapshot, 'definition' | 'onlyTaskIds'>, phaseId: string): FlowTask[] {
  return snapshot.definition.tasks.filter(
    (task) => task.phase === phaseId && task.enabled && (!snapshot.onlyTaskIds || snapshot.onlyTaskIds.has(task.id)),
  );
}

const FAILED: readonly JobStatus[] = ['error', 'terminated', 'cancelled'];

/** How a task stands: running (or due), finished well, or failed for good. */
type TaskStanding = { state: 'pending' } | { state: 'retry'; at: number } | { state: 'done'; failed: boolean };

function standing(task: FlowTask, phase: FlowPhase, attempts: readonly TaskAttempt[], killed: boolean): TaskStanding {
  const last = attempts.at(-1);
  if (!last || !isFinished(last.status)) return { state: 'pending' };
  if (!FAILED.includes(last.status)) return { state: 'done', failed: false };
  const retry = task.action.type === 'job' ? (task.action.retry ?? phase.retry) : undefined;
  if (
    !killed &&
    last.status === 'error' &&
    retry &&
    attempts.length <= retry.maxRetries &&
    retries(retry, last.message)
  ) {
    return { state: 'retry', at: (last.endedAt ?? 0) + retry.delaySeconds * 1000 };
  }
  return { state: 'done', failed: true };
}

function retries(retry: TaskRetry, message: string | undefined): boolean {
  if (retry.retryOn.length === 0) return true;
  const text = message ?? '';
  return retry.retryOn.some((rule) =>
    rule.type === 'errorMessageExact' ? text === rule.value : text.includes(rule.value),
  );
}

/** The outcome of a phase whose tasks all finished: failed tasks with continueOnFailure make a warning. */
function phaseOutcome(tasks: FlowTask[], snapshot: FlowSnapshot): 'success' | 'error' | 'warning' {
  let warning = false;
  for (const task of tasks) {
    const last = snapshot.attempts.get(task.id)?.at(-1);
    if (!last || !FAILED.includes(last.status)) continue;
    if (!task.continueOnFailure) return 'error';
    warning = true;
  }
  return warning ? 'warning' : 'success';
}

/**
 * The next step of a flow run: a pure function of what the store holds, so any process can take
 * it after any crash and reach the same decision (starting what is due, ending what is done).
 */
export function nextFlowStep(snapshot: FlowSnapshot): FlowAction[] {
  if (snapshot.killed) return killSteps(snapshot);
  const step: Step = {
    snapshot,
    phaseStatus: new Map(snapshot.phases),
    entered: [...snapshot.entered],
    actions: [],
    wake: undefined,
  };
  for (const phase of snapshot.definition.phases) {
    if (step.phaseStatus.get(phase.id) === 'processing') phaseStep(step, phase);
  }
  // entering a phase with nothing to run ends it at once, which may let the next one start
  for (let pass = 0; pass <= snapshot.definition.phases.length; pass++) {
    const before = step.actions.length;
    if (snapshot.definition.componentId === 'keboola.flow') conditionalSteps(step);
    else dependencySteps(step);
    if (step.actions.length === before || step.actions.at(-1)?.type === 'endFlow') break;
  }
  if (step.wake !== undefined && !step.actions.some((a) => a.type === 'endFlow')) {
    step.actions.push({ type: 'wakeAt', at: step.wake });
  }
  return step.actions;
}

/** A step being worked out: the phases' statuses as its actions leave them. */
interface Step {
  snapshot: FlowSnapshot;
  phaseStatus: Map<string, JobStatus>;
  entered: string[];
  actions: FlowAction[];
  wake: number | undefined;
}

/** A running phase: its tasks that are due start; once all finished, the phase ends. */
function phaseStep(step: Step, phase: FlowPhase): void {
  const { snapshot } = step;
  const tasks = runnableTasks(snapshot, phase.id);
  let finished = true;
  for (const task of tasks) {
    const attempts = snapshot.attempts.get(task.id) ?? [];
    const now = standing(task, phase, attempts, false);
    if (now.state === 'pending') {
      finished = false;
      if (attempts.length > 0) continue;
      if (task.action.type === 'notification') step.actions.push({ type: 'notify', taskId: task.id });
      else {
        const phaseStart = snapshot.phaseStartedAt.get(phase.id) ?? snapshot.now;
        const notBefore = phaseStart + task.action.delaySeconds * 1000;
        step.actions.push({ type: 'startTask', taskId: task.id, notBefore });
      }
    } else if (now.state === 'retry') {
      finished = false;
      if (now.at <= snapshot.now) step.actions.push({ type: 'startTask', taskId: task.id, notBefore: snapshot.now });
      else step.wake = Math.min(step.wake ?? Infinity, now.at);
    }
  }
  if (finished) {
    const status = phaseOutcome(tasks, snapshot);
    step.actions.push({ type: 'endPhase', phaseId: phase.id, status });
    step.phaseStatus.set(phase.id, status);
  }
}

function notStarted(status: JobStatus | undefined): boolean {
  return status === 'waiting' || status === 'created';
}

/** keboola.orchestrator: every phase whose dependencies succeeded starts; a failed phase cancels the rest. */
function dependencySteps(step: Step): void {
  const { phaseStatus } = step;
  const failed = [...phaseStatus.values()].some((status) => status === 'error');
  const good = (status: JobStatus | undefined) => status === 'success' || status === 'warning';
  for (const phase of step.snapshot.definition.phases) {
    if (!notStarted(phaseStatus.get(phase.id))) continue;
    if (failed) {
      step.actions.push({ type: 'endPhase', phaseId: phase.id, status: 'cancelled' });
      phaseStatus.set(phase.id, 'cancelled');
    } else if (phase.dependsOn.every((id) => good(phaseStatus.get(id)))) {
      enterPhase(step, phase);
    }
  }
  const statuses = [...phaseStatus.values()];
  if (!statuses.every(isFinished)) return;
  if (statuses.includes('error')) {
    step.actions.push({
      type: 'endFlow',
      status: 'error',
      message: 'A task failed, so the phases after it did not run.',
    });
  } else if (statuses.includes('warning')) {
    step.actions.push({
      type: 'endFlow',
      status: 'warning',
      message: 'A task failed; the flow went on past it (continueOnFailure).',
    });
  } else step.actions.push({ type: 'endFlow', status: 'success', message: '' });
}

/** keboola.flow: the first phase starts; a finished phase's first true transition picks the next. */
function conditionalSteps(step: Step): void {
  const { snapshot, phaseStatus } = step;
  const phases = snapshot.definition.phases;
  const current = step.entered.at(-1);
  if (current === undefined) {
    const first = phases[0];
    if (first) enterPhase(step, first);
    else step.actions.push({ type: 'endFlow', status: 'success', message: 'The flow has no phases.' });
    return;
  }
  const status = phaseStatus.get(current);
  const phase = phases.find((p) => p.id === current);
  if (!phase || status === undefined || !isFinished(status)) return;
  const end = (message: string, outcome: 'success' | 'error' | 'warning') => {
    for (const p of phases) {
      if (!notStarted(phaseStatus.get(p.id))) continue;
      step.actions.push({ type: 'endPhase', phaseId: p.id, status: 'cancelled' });
      phaseStatus.set(p.id, 'cancelled');
    }
    step.actions.push({ type: 'endFlow', status: outcome, message });
  };
  if (status === 'error' && !phase.next.some((t) => t.condition)) {
    return end(`The phase ${phase.name} failed and no transition handles a failure.`, 'error');
  }
  const finished = finishedTasks(snapshot);
  const transition = phase.next.find((t) => !t.condition || conditionHolds(t.condition, { finished, phaseStatus }));
  if (phase.next.length === 0 || transition?.goto === null) {
    const anyFailed = [...phaseStatus.values()].some((s) => s === 'error' || s === 'warning');
    return end(
      anyFailed ? 'A task failed; a transition took the flow past it.' : '',
      anyFailed ? 'warning' : 'success',
    );
  }
  if (!transition) return end(`No transition of the phase ${phase.name} holds.`, 'error');
  const target = phases.find((p) => p.id === transition.goto);
  if (!target) return end(`The phase ${phase.name} goes to a phase that does not exist.`, 'error');
  if (step.entered.includes(target.id)) {
    return end(
      `The phase ${target.name} would run a second time: gex runs each phase of a flow at most once.`,
      'error',
    );
  }
  enterPhase(step, target);
}

/** Starts a phase and its tasks; a phase with none to run ends at once. */
function enterPhase(step: Step, phase: FlowPhase): void {
  step.phaseStatus.set(phase.id, 'processing');
  step.entered.push(phase.id);
  step.actions.push({ type: 'startPhase', phaseId: phase.id });
  phaseStep(step, phase);
}

function finishedTasks(snapshot: FlowSnapshot): Map<string, FinishedTask> {
  const finished = new Map<string, FinishedTask>();
  for (const task of snapshot.definition.tasks) {
    const last = snapshot.attempts.get(task.id)?.at(-1);
    if (last && isFinished(last.status)) finished.set(task.id, { phase: task.phase, attempt: last });
  }
  return finished;
}

/** A killed root: running task jobs are terminated, phases not finished end terminated or cancelled. */
function killSteps(snapshot: FlowSnapshot): FlowAction[] {
  const actions: FlowAction[] = [];
  let running = false;
  for (const attempts of snapshot.attempts.values()) {
    const last = attempts.at(-1);
    // a notification in flight (no job) is not stopped: its outcome no longer matters
    if (last && last.jobId !== '' && !isFinished(last.status)) {
      running = true;
      if (last.status !== 'terminating') actions.push({ type: 'terminateTask', jobId: last.jobId });
    }
  }
  if (running) return actions;
  for (const phase of snapshot.definition.phases) {
    const status = snapshot.phases.get(phase.id);
    if (status === undefined || isFinished(status)) continue;
    actions.push({ type: 'endPhase', phaseId: phase.id, status: status === 'processing' ? 'terminated' : 'cancelled' });
  }
  actions.push({ type: 'endFlow', status: 'terminated', message: 'The flow was killed.' });
  return actions;
}
