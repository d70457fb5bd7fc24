import { UserError } from '../../common/errors.js';
import { displayId } from '../../common/log-text.js';
import type { ScheduleDefinition } from '../../jobs/schedules/schedule-definition.js';

/** A schedule as `gex schedules` shows it, from the store or from a server's Scheduler API. */
export interface ScheduleView {
  id: string;
  configurationId: string;
  definition: ScheduleDefinition;
  /** why it no longer fires; null while it does (a server's API does not say: null) */
  stopped: string | null;
  /** the latest execution's job, with its status when known */
  lastJob: { id: string; status: string } | null;
}

/** Where `gex schedules` works: the embedded store, or a server's Storage and Scheduler APIs. */
export interface SchedulesBackend {
  /** stores the definition as a keboola.scheduler configuration and activates it */
  add(definition: ScheduleDefinition, name: string): Promise<ScheduleView>;
  list(): Promise<ScheduleView[]>;
  /** a new version of the schedule's configuration with this state, activated (same schedule id) */
  setState(id: string, state: 'enabled' | 'disabled'): Promise<ScheduleView>;
  /** the schedule and its configuration */
  remove(id: string): Promise<void>;
  close(): Promise<void>;
}

/** A schedule id as typed: a number, else a usage error (never sent anywhere). */
export function scheduleIdArg(id: string): string {
  if (!/^\d{1,15}$/.test(id))
    throw new UserError(
      'GEX_CLI_USAGE',
      `A schedule id is a number (gex schedules list shows them), got ${displayId(id.slice(0, 40))}`,
    );
  return id;
}
