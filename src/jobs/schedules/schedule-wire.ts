import { fromPlain, type JsonValue } from '../../json/index.js';
import type { Execution, ScheduleRecord } from './schedule-repository.js';

/** A schedule as Keboola's Scheduler API sends it (ids as strings, as its Go SDK reads them). */
export function scheduleToWire(schedule: ScheduleRecord, executions: readonly Execution[]): JsonValue {
  const { definition } = schedule;
  return fromPlain({
    id: String(schedule.id),
    configurationId: schedule.configurationId,
    configurationVersionId: String(schedule.configurationVersionId),
    tokenId: String(schedule.tokenId),
    schedule: { cronTab: definition.cronTab, timezone: definition.timezone, state: definition.state },
    target: {
      componentId: definition.target.componentId,
      configurationId: definition.target.configurationId,
      configurationRowIds: definition.target.configurationRowIds,
      mode: definition.target.mode,
    },
    executions: executions.map((e) => ({ jobId: String(e.jobId), executionTime: e.executionTime })),
  });
}
