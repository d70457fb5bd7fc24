import type { JsonValue } from '../../json/index.js';
import { parsePlaceholders, type Placeholder } from '../children/placeholders.js';
import { compileRecursionFilter, type Filter } from '../children/recursion-filter.js';
import type { JobConfig } from '../config/job-config.js';
import type { Paginator } from '../pagination/paginator.js';
import type { ChildEntry } from './job-events.js';
import type { JobInstance } from './job-instance.js';

/** A child definition's recursionFilter and placeholders, read once per definition. */
type ChildSetup = { filter: Filter | null; placeholders: Placeholder[] } | { error: unknown };
const setups = new WeakMap<JobConfig, ChildSetup>();

function setupOf(child: JobConfig): ChildSetup {
  let setup = setups.get(child);
  if (!setup) {
    try {
      setup = {
        filter: child.recursionFilter ? compileRecursionFilter(child.recursionFilter) : null,
        placeholders: parsePlaceholders(child.placeholders),
      };
    } catch (error) {
      setup = { error };
    }
    setups.set(child, setup);
  }
  return setup;
}

/**
 * The child runs of one page, in Generic Extractor's order: for each child definition, for each
 * record that passes its recursionFilter, one task. A child without placeholders of its own makes
 * GE warn once per parent record; it still runs with the values it inherits from its ancestors'
 * placeholders, and never when it inherits none. An error ends the list where GE would stop.
 */
export function childEntries(
  parent: JobInstance,
  data: JsonValue[],
  paginator: Paginator,
  order: number[],
): ChildEntry[] {
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
        if (parent.resolved.length === 0) continue;
      }
      entries.push({
        task: {
          job: child,
          parent,
          record,
          placeholders: setup.placeholders,
          paginator: paginator.clone(),
          order: [...order, entries.length],
        },
      });
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
