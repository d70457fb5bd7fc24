import type { JsonValue } from '../../json/index.js';
import { parsePlaceholders, type Placeholder } from '../children/placeholders.js';
import { compileRecursionFilter, type Filter } from '../children/recursion-filter.js';
import type { JobConfig } from '../config/job-config.js';
import type { Paginator } from '../pagination/paginator.js';
import type { JobEventStream } from './job-events.js';
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

/** A child definition's recursionFilter and placeholders, read once per definition. */
type ChildSetup = { filter: Filter | null; placeholders: Placeholder[] } | { error: unknown };
const setups = new WeakMap<JobConfig, ChildSetup>();

function setupOf(child: JobConfig): ChildSetup {
  let setup = setups.get(child);
  if (!setup) {
    try {
      setup = { filter: child.recursionFilter ? compileRecursionFilter(child.recursionFilter) : null, placeholders: parsePlaceholders(child.placeholders) };
    } catch (error) {
      setup = { error };
    }
    setups.set(child, setup);
  }
  return setup;
}

/**
 * The child runs of one page, in Generic Extractor's order: for each child definition, for each
 * record that passes its recursionFilter, one task. A child without placeholders of its own never
 * runs: GE warns once per parent record. An error ends the list where GE would stop.
 */
export function childEntries(parent: JobInstance, data: JsonValue[], paginator: Paginator, order: number[]): ChildEntry[] {
  const entries: ChildEntry[] = [];
  for (const child of parent.job.children) {
    const setup = setupOf(child);
    if ('error' in setup) {
      entries.push({ error: setup.error });
      return entries;
    }
    for (const record of data) {
      try {
        if (setup.filter && !setup.filter(record)) continue;
      } catch (error) {
        entries.push({ error });
        return entries;
      }
      if (setup.placeholders.length === 0) {
        entries.push({ warning: `No 'placeholders' set for '${child.endpoint}'` });
        continue;
      }
      entries.push({ task: { job: child, parent, record, placeholders: setup.placeholders, paginator: paginator.clone(), order: [...order, entries.length] } });
    }
  }
  return entries;
}

/** Depth-first order: a task before its descendants, earlier pages and records first. */
export function compareOrder(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
