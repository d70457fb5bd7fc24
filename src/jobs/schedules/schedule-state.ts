import { fromPlain } from '../../json/index.js';
import type { ConfigStore } from '../../store/config-store.js';
import type { TokenInfo } from '../../store/types.js';
import { activateSchedule } from './schedule-activation.js';
import { scheduleConfiguration, scheduleDefinition } from './schedule-definition.js';
import type { ScheduleRecord, ScheduleRepository } from './schedule-repository.js';
import { SCHEDULER_COMPONENT_ID } from './scheduler-component.js';

/**
 * Enables or disables a schedule as Keboola's clients do over the Scheduler API: a new version of
 * its `keboola.scheduler` configuration with that state, then activated (the same schedule id).
 */
export async function setScheduleState(
  store: ConfigStore,
  token: TokenInfo,
  schedules: ScheduleRepository,
  schedule: ScheduleRecord,
  state: 'enabled' | 'disabled',
): Promise<ScheduleRecord> {
  const current = await store.getConfiguration(SCHEDULER_COMPONENT_ID, schedule.configurationId);
  const definition = { ...scheduleDefinition(current.configuration), state };
  await store.updateConfiguration(SCHEDULER_COMPONENT_ID, schedule.configurationId, {
    configuration: fromPlain(scheduleConfiguration(definition)),
    changeDescription: `Schedule ${state}`,
  });
  return activateSchedule(store, token, schedules, schedule.configurationId);
}
