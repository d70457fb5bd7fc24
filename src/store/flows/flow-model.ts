import type { FlowCondition } from './flow-conditions.js';

/** Keboola's two flow components: legacy phases with `dependsOn`, and conditional flows. */
export const ORCHESTRATOR_COMPONENT_ID = 'keboola.orchestrator';
export const FLOW_COMPONENT_ID = 'keboola.flow';
export type FlowComponentId = typeof ORCHESTRATOR_COMPONENT_ID | typeof FLOW_COMPONENT_ID;

export function isFlowComponent(componentId: string): componentId is FlowComponentId {
  return componentId === ORCHESTRATOR_COMPONENT_ID || componentId === FLOW_COMPONENT_ID;
}

/** Bounds a flow must stay within: a run creates a job per task, and a phase's tasks start together. */
export const FLOW_LIMITS = {
  phases: 100,
  tasksPerPhase: 100,
  tasks: 500,
  maxRetries: 10,
  delaySeconds: 3600,
  conditionDepth: 10,
} as const;

export interface TaskRetry {
  /** runs after the first: 3 means up to 4 runs */
  maxRetries: number;
  delaySeconds: number;
  /** an error message matching any of these is retried; none: every error is */
  retryOn: { type: 'errorMessageContains' | 'errorMessageExact'; value: string }[];
}

export interface FlowTransition {
  id: string;
  condition: FlowCondition | undefined;
  /** the phase to go to; null ends the flow */
  goto: string | null;
}

export interface FlowPhase {
  id: string;
  name: string;
  /** keboola.orchestrator: the phases that must succeed first */
  dependsOn: string[];
  /** keboola.flow: the transitions, in order (none: the flow ends after this phase) */
  next: FlowTransition[];
  /** keboola.flow: the retry of this phase's job tasks that have none of their own */
  retry: TaskRetry | undefined;
}

export interface JobTaskAction {
  type: 'job';
  componentId: string;
  configId: string;
  mode: string;
  configRowIds: string[];
  delaySeconds: number;
  retry: TaskRetry | undefined;
}

export interface NotificationTaskAction {
  type: 'notification';
  channel: 'email' | 'webhook';
  recipients: string[];
  title: string;
  message: string;
}

export interface FlowTask {
  id: string;
  name: string;
  phase: string;
  enabled: boolean;
  continueOnFailure: boolean;
  action: JobTaskAction | NotificationTaskAction;
}

/** A flow configuration, checked: phases in their run order (dependencies first), tasks as written. */
export interface FlowDefinition {
  componentId: FlowComponentId;
  phases: FlowPhase[];
  tasks: FlowTask[];
}
