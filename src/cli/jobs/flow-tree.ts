import { displayId, displayText, excerpt } from '../../common/log-text.js';
import { isJsonObject, stringifyExact, type JsonValue } from '../../json/index.js';
import type { JobsBackend } from './jobs-backend.js';
import type { JobView } from './job-view.js';

/** jobs read per search page (the Queue API's most) */
export const TREE_PAGE = 500;
/** the most jobs of a tree read: a flow's 500 tasks with 10 retries each, its 100 phases, and room */
export const TREE_MAX_JOBS = 10_000;
/** levels below the root printed (a flow is 2 deep; a task's own jobs go deeper) */
const MAX_DEPTH = 8;
/** characters of a failed task's message printed */
const MESSAGE_CHARS = 300;

/** A flow's root job (`orchestrationContainer`): `gex jobs show` prints its tree. */
export function isFlowRoot(job: JobView): boolean {
  return job.type === 'orchestrationContainer';
}

/** The jobs below `root` (a flow's phases and tasks, and their own children), oldest first. */
export async function readTree(
  backend: Pick<JobsBackend, 'search'>,
  root: JobView,
): Promise<{ jobs: JobView[]; truncated: boolean }> {
  const jobs: JobView[] = [];
  if (root.runId === '') return { jobs, truncated: false };
  for (;;) {
    const page = await backend.search({
      parentRunId: root.runId,
      limit: TREE_PAGE,
      offset: jobs.length,
      oldestFirst: true,
    });
    jobs.push(...page);
    if (page.length < TREE_PAGE) return { jobs, truncated: false };
    if (jobs.length >= TREE_MAX_JOBS) return { jobs, truncated: true };
  }
}

const str = (value: JsonValue | undefined): string =>
  value === undefined || value === null ? '' : typeof value === 'string' ? value : stringifyExact(value);

/** What the root's result (Keboola's flow result document, once the flow ended) says of its phases and tasks. */
interface ResultEntry {
  id: string;
  name: string;
  phaseId: string;
  jobId: string;
  status: string;
}

function resultEntries(root: JobView, key: 'phases' | 'tasks'): ResultEntry[] {
  const result = root.wire.get('result');
  const list = isJsonObject(result) ? result.get(key) : undefined;
  if (!Array.isArray(list)) return [];
  return list.filter(isJsonObject).map((entry) => ({
    id: str(entry.get('id')),
    name: str(entry.get('name')),
    phaseId: str(entry.get('phaseId')),
    jobId: str(entry.get('jobId')),
    status: str(entry.get('status')),
  }));
}

/** a tab and the duration; nothing before the job has one */
const took = (job: JobView) => (job.durationSeconds === null ? '' : `\t${job.durationSeconds}s`);
const named = (name: string | undefined) => (name ? ` ${displayText(name)}` : '');

/**
 * The lines `gex jobs show` prints under a flow's root line: each phase (id, name, status, job)
 * and under it each task (id, name, component and configuration, job, status, duration; a failed
 * one's message below it), tasks that ran no job (skipped, a notification) as the root's result
 * says, and anything a task started below it. Names come from the root's result, so appear once
 * the flow has ended. Every value is shown through displayText / displayId: a server's answer and
 * a flow's names are not trusted.
 */
export function treeLines(root: JobView, jobs: readonly JobView[], truncated: boolean): string[] {
  const phaseNames = new Map(resultEntries(root, 'phases').map((p) => [p.id, p.name]));
  const tasks = resultEntries(root, 'tasks');
  const taskNames = new Map(tasks.map((t) => [t.id, t.name]));
  const below = new Map<string, JobView[]>();
  for (const job of jobs) {
    if (job.id === root.id) continue;
    below.set(job.parentRunId, [...(below.get(job.parentRunId) ?? []), job]);
  }
  const lines: string[] = [];
  const shown = new Set<string>([root.id]);
  const jobIds = new Set(jobs.map((j) => j.id));

  const line = (job: JobView): string => {
    const what = `${displayText(job.component)} ${displayText(job.config)}`;
    if (job.type === 'phaseContainer')
      return `phase ${displayId(job.phaseId)}${named(phaseNames.get(job.phaseId))}\t${displayText(job.status)}\tjob ${job.id}`;
    const status = `job ${job.id}\t${displayText(job.status)}${took(job)}`;
    if (job.orchestrationTaskId !== '')
      return `task ${displayId(job.orchestrationTaskId)}${named(taskNames.get(job.orchestrationTaskId))}\t${what}\t${status}`;
    return `${what}\t${status}`;
  };
  const visit = (job: JobView, depth: number): void => {
    if (shown.has(job.id)) return;
    shown.add(job.id);
    const indent = '  '.repeat(depth);
    lines.push(`${indent}${line(job)}`);
    const failed =
      job.type !== 'phaseContainer' && !['success', 'processing', 'created', 'waiting'].includes(job.status);
    if (failed && job.message) lines.push(`${indent}  ${displayText(excerpt(job.message, MESSAGE_CHARS))}`);
    if (depth >= MAX_DEPTH) return;
    for (const child of below.get(job.runId) ?? []) visit(child, depth + 1);
    if (job.type === 'phaseContainer') {
      // the phase's tasks that ran no job: skipped, or a notification (the root's result says)
      for (const task of tasks)
        if (task.phaseId === job.phaseId && !jobIds.has(task.jobId))
          lines.push(
            `${indent}  task ${displayId(task.id)}${named(task.name)}\tno job\t${displayText(task.status || 'skipped')}`,
          );
    }
  };
  for (const job of below.get(root.runId) ?? []) visit(job, 1);
  // jobs below the root whose parent is not among them: after the rest
  for (const job of jobs) visit(job, 1);
  if (truncated) lines.push(`  (only the first ${jobs.length} jobs of the flow are shown)`);
  return lines;
}

/** After a flow root's line (printJob): its tree, read from `backend`. Nothing for another job. */
export async function printTree(
  backend: Pick<JobsBackend, 'search'>,
  job: JobView,
  out: (text: string) => void,
): Promise<void> {
  if (!isFlowRoot(job)) return;
  const { jobs, truncated } = await readTree(backend, job);
  for (const line of treeLines(job, jobs, truncated)) out(`${line}\n`);
}
