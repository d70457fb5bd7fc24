import type { FastifyInstance } from 'fastify';
import { cronTicks } from '../../../jobs/schedules/cron-tick.js';
import type { ScheduleRecord } from '../../../jobs/schedules/schedule-repository.js';
import { setScheduleState } from '../../../jobs/schedules/schedule-state.js';
import { StoreError } from '../../../store/store-error.js';
import type { JobRepository } from '../../../jobs/job-repository.js';
import type { ScheduleRepository } from '../../../jobs/schedules/schedule-repository.js';
import { renderPage, userOf } from '../console-context.js';

function scheduleIdOf(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw new StoreError(404, '', 'There is no such schedule.');
  return Number(text);
}

/** When a schedule fires next (ISO), or null while it is disabled or stopped (or never fires). */
function nextRun(schedule: ScheduleRecord, now: Date): string | null {
  const { definition } = schedule;
  if (schedule.stopped !== null || definition.state !== 'enabled') return null;
  try {
    return cronTicks(definition.cronTab, definition.timezone).nextAfter(now)?.toISOString() ?? null;
  } catch {
    return null;
  }
}

/**
 * The Schedules section: each schedule's target, cron, time zone, next run, last job and state
 * (what `gex schedules list` and the Scheduler API's list show), with "Disable" / "Enable" doing
 * what `gex schedules disable|enable` does.
 */
export function schedulePages(
  app: FastifyInstance,
  pages: { schedules?: ScheduleRepository; queue?: JobRepository },
): void {
  const { schedules, queue } = pages;

  const requireSchedules = () => {
    if (!schedules)
      throw new StoreError(404, '', 'This gex serves no schedules (start it with a store that has them).');
    return schedules;
  };

  app.get('/schedules', async (request, reply) => {
    const repository = requireSchedules();
    const { projectId } = userOf(request).token;
    const list = await repository.list(projectId);
    const executions = await repository.executions(list.map((s) => s.id));
    const lastIds = list.flatMap(
      (s) =>
        executions
          .get(s.id)
          ?.slice(0, 1)
          .map((e) => e.jobId) ?? [],
    );
    const statuses = (await queue?.statuses(lastIds)) ?? new Map();
    const now = new Date();
    return renderPage(request, reply, 'schedules', 'Schedules', {
      title: 'Schedules',
      schedules: list.map((s) => {
        const last = executions.get(s.id)?.[0];
        return {
          id: s.id,
          configurationId: s.configurationId,
          version: s.configurationVersionId,
          target: s.definition.target,
          cronTab: s.definition.cronTab,
          timezone: s.definition.timezone,
          state: s.stopped === null ? s.definition.state : 'stopped',
          stopped: s.stopped,
          nextRun: nextRun(s, now),
          lastJob: last
            ? { id: last.jobId, at: last.executionTime, status: statuses.get(last.jobId) ?? 'deleted' }
            : null,
        };
      }),
    });
  });

  for (const [action, state] of [
    ['disable', 'disabled'],
    ['enable', 'enabled'],
  ] as const) {
    app.post<{ Params: { id: string } }>(`/schedules/:id/${action}`, async (request, reply) => {
      const repository = requireSchedules();
      const { token, store } = userOf(request);
      const schedule = await repository.get(token.projectId, scheduleIdOf(request.params.id));
      if (!schedule) throw new StoreError(404, '', 'There is no such schedule in this project.');
      await setScheduleState(store, token, repository, schedule, state);
      return reply.redirect('/console/schedules', 303);
    });
  }
}
