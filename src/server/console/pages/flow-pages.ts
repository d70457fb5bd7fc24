import type { FastifyInstance } from 'fastify';
import type { QueueJob } from '../../../jobs/job-record.js';
import type { JobRepository } from '../../../jobs/job-repository.js';
import { parseFlowDefinition } from '../../../store/flows/flow-definition.js';
import {
  FLOW_COMPONENT_ID,
  ORCHESTRATOR_COMPONENT_ID,
  type FlowComponentId,
  type FlowDefinition,
} from '../../../store/flows/flow-model.js';
import { StoreError } from '../../../store/store-error.js';
import type { Configuration } from '../../../store/types.js';
import { renderPage, userOf } from '../console-context.js';

/** runs shown per flow (newest first) */
export const FLOW_RUNS = 20;

const FLOW_COMPONENTS: readonly FlowComponentId[] = [ORCHESTRATOR_COMPONENT_ID, FLOW_COMPONENT_ID];

/** A flow's phases in run order, each with its tasks as written. */
function phasesOf(flow: FlowDefinition) {
  return flow.phases.map((phase) => ({
    id: phase.id,
    name: phase.name,
    dependsOn: phase.dependsOn,
    next: phase.next.map((t) => t.goto),
    tasks: flow.tasks
      .filter((task) => task.phase === phase.id)
      .map((task) => ({
        id: task.id,
        name: task.name,
        enabled: task.enabled,
        continueOnFailure: task.continueOnFailure,
        ...(task.action.type === 'job'
          ? { kind: 'job', componentId: task.action.componentId, configId: task.action.configId }
          : { kind: 'notification', channel: task.action.channel, notice: task.action.title }),
      })),
  }));
}

function runRow(job: QueueJob) {
  return { id: job.id, status: job.status, created: job.created, duration: job.durationSeconds };
}

/** The newest root jobs (runs) of a flow configuration. */
function runsOf(queue: JobRepository | undefined, projectId: number, componentId: string, configId: string) {
  if (!queue) return Promise.resolve([]);
  return queue.search(projectId, {
    componentIds: [componentId],
    configIds: [configId],
    types: ['orchestrationContainer'],
    limit: FLOW_RUNS,
    offset: 0,
    sortBy: 'id',
    sortOrder: 'desc',
  });
}

/**
 * The Flows section: each `keboola.orchestrator` and `keboola.flow` configuration of the project
 * with its phases (in run order) and their tasks, as the flow runner reads them, and its newest runs.
 */
export function flowPages(app: FastifyInstance, pages: { queue?: JobRepository }): void {
  const { queue } = pages;

  app.get('/flows', async (request, reply) => {
    const { token, store } = userOf(request);
    const found: Array<{ componentId: FlowComponentId; config: Configuration }> = [];
    for (const componentId of FLOW_COMPONENTS) {
      const configs = await store.listConfigurations(componentId).catch((error: unknown) => {
        // a store without the component has no flows of it
        if (error instanceof StoreError && error.status === 404) return [];
        throw error;
      });
      for (const config of configs) found.push({ componentId, config });
    }
    const flows = await Promise.all(
      found.map(async ({ componentId, config }) => {
        let phases: ReturnType<typeof phasesOf> = [];
        let problem: string | undefined;
        try {
          phases = phasesOf(parseFlowDefinition(componentId, config.configuration, { configId: config.id }));
        } catch (error) {
          if (!(error instanceof StoreError)) throw error;
          problem = error.message;
        }
        const runs = await runsOf(queue, token.projectId, componentId, config.id);
        return {
          componentId,
          id: config.id,
          name: config.name,
          description: config.description,
          disabled: config.isDisabled,
          version: config.version,
          phases,
          problem,
          runs: runs.map(runRow),
        };
      }),
    );
    return renderPage(request, reply, 'flows', 'Flows', { title: 'Flows', flows, runLimit: FLOW_RUNS });
  });
}
