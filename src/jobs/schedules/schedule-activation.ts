import { excerptId } from '../../common/log-text.js';
import type { ConfigStore } from '../../store/config-store.js';
import { StoreError } from '../../store/store-error.js';
import type { TokenInfo } from '../../store/types.js';
import { newJob, type JobTarget } from '../job-request.js';
import { scheduleDefinition, type ScheduleDefinition } from './schedule-definition.js';
import { SCHEDULER_COMPONENT_ID } from './scheduler-component.js';
import type { ScheduleRecord, ScheduleRepository } from './schedule-repository.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/** `POST /jobs`'s keys, as a schedule's fields name them */
const TARGET_FIELDS: Record<string, string> = {
  component: 'target.componentId',
  config: 'target.configurationId',
  configRowIds: 'target.configurationRowIds',
};

/** What a schedule's tick runs, as a job's target. */
export function scheduleJobTarget(target: ScheduleDefinition['target']): JobTarget {
  return {
    componentId: target.componentId,
    configId: target.configurationId,
    configRowIds: target.configurationRowIds,
    mode: target.mode,
  };
}

/**
 * Checks that a schedule's target could be run now by `token`, exactly as `POST /jobs` would check
 * it (the component, a configuration of the token's project, its rows); a refusal names the
 * schedule's field.
 */
export async function checkTarget(definition: ScheduleDefinition, token: TokenInfo, store: ConfigStore): Promise<void> {
  const { target } = definition;
  try {
    await newJob(scheduleJobTarget(target), token, store);
  } catch (error) {
    const key = error instanceof StoreError ? error.details?.[0]?.key : undefined;
    const field = key !== undefined ? TARGET_FIELDS[key] : undefined;
    if (!(error instanceof StoreError) || field === undefined) throw error;
    const detail = error.details![0].message;
    throw new StoreError(
      error.status,
      KEBOOLA_ERRORS.schedulerValidation.code,
      `Invalid schedule: ${field}: ${detail}`,
      [{ key: field, message: detail }],
    );
  }
}

/**
 * Activates a `keboola.scheduler` configuration (its current version, or `versionId`) of the
 * token's project: the schedule and its target are checked, then stored as the configuration's
 * one schedule (replacing an earlier activation).
 */
export async function activateSchedule(
  store: ConfigStore,
  token: TokenInfo,
  schedules: ScheduleRepository,
  configurationId: string,
  versionId?: number,
): Promise<ScheduleRecord> {
  if (token.readOnly) throw StoreError.accessDenied('A read-only token cannot activate schedules.');
  let body;
  let version;
  try {
    if (versionId === undefined) {
      const configuration = await store.getConfiguration(SCHEDULER_COMPONENT_ID, configurationId);
      if (configuration.isDeleted) throw StoreError.notFound('deleted');
      body = configuration.configuration;
      version = configuration.version;
    } else {
      body = (await store.getConfigurationVersion(SCHEDULER_COMPONENT_ID, configurationId, versionId)).configuration;
      version = versionId;
    }
  } catch (error) {
    if (error instanceof StoreError && error.status === 404)
      throw new StoreError(
        404,
        KEBOOLA_ERRORS.schedulerConfigurationNotFound.code,
        `Configuration ${excerptId(configurationId)}${versionId === undefined ? '' : ` version ${versionId}`} of ${SCHEDULER_COMPONENT_ID} not found.`,
      );
    throw error;
  }
  const definition = scheduleDefinition(body);
  await checkTarget(definition, token, store);
  return schedules.activate({
    projectId: token.projectId,
    configurationId,
    configurationVersionId: version,
    tokenId: token.id,
    definition,
  });
}
