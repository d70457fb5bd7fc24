import { parametersSchema } from '../extractor/config/schema.js';
import { SCHEDULER_COMPONENT_ID } from '../jobs/schedules/scheduler-component.js';
import { fromPlain } from '../json/index.js';
import { FLOW_COMPONENT_ID, ORCHESTRATOR_COMPONENT_ID } from '../store/flows/flow-model.js';
import type { Component } from '../store/types.js';

export const GENERIC_EXTRACTOR_ID = 'ex-generic-v2';

/**
 * Components every store opened by gex registers on open: the store keeps a registry, the
 * application decides what is built in.
 */
export function builtinComponents(): Component[] {
  return [genericExtractorComponent(), schedulerComponent(), ...flowComponents()];
}

/** Generic Extractor as a registered component, with the JSON Schema of the parameters gex accepts. */
export function genericExtractorComponent(): Component {
  const definition = {
    id: GENERIC_EXTRACTOR_ID,
    type: 'extractor',
    name: 'Generic Extractor',
    description: 'Extract data from any REST API',
    longDescription:
      'Generic Extractor (gex): pages through REST APIs and writes CSV tables with manifests, compatible with Keboola Generic Extractor configurations.',
    version: 1,
    hasUI: false,
    hasRun: true,
    ico32: '',
    ico64: '',
    data: {
      definition: { type: 'aws-ecr', uri: 'gex', tag: 'latest', repository: { region: 'local' } },
      vendor: { contact: ['gex maintainers'], licenseUrl: 'https://opensource.org/licenses/MIT' },
      configuration_format: 'json',
      network: 'bridge',
      memory: '512m',
      forward_token: false,
      forward_token_details: false,
      default_bucket: true,
      default_bucket_stage: 'in',
      staging_storage: { input: 'local' },
    },
    flags: ['genericUI'],
    configurationSchema: parametersSchema,
    emptyConfiguration: { parameters: { api: { baseUrl: '' }, config: { jobs: [] } } },
    uiOptions: {},
    configurationDescription: null,
    documentationUrl: 'https://developers.keboola.com/extend/generic-extractor/',
  };
  return { id: GENERIC_EXTRACTOR_ID, type: 'extractor', name: 'Generic Extractor', definition: fromPlain(definition) };
}

/**
 * Keboola's Scheduler as a component: its configurations are schedules (`{schedule, target}`),
 * stored and versioned like any configuration, activated through the Scheduler API.
 */
export function schedulerComponent(): Component {
  return platformComponent({
    id: SCHEDULER_COMPONENT_ID,
    name: 'Scheduler',
    description: 'Run a configuration on a cron schedule',
    emptyConfiguration: {
      schedule: { cronTab: '0 * * * *', timezone: 'UTC', state: 'enabled' },
      target: { componentId: GENERIC_EXTRACTOR_ID, configurationId: '', configurationRowIds: [], mode: 'run' },
    },
    documentationUrl: 'https://help.keboola.com/flows/#schedules',
  });
}

/** Keboola's two flow components: configurations of phases and tasks, run as a tree of jobs. */
export function flowComponents(): Component[] {
  return [
    platformComponent({
      id: ORCHESTRATOR_COMPONENT_ID,
      name: 'Orchestrator',
      description: 'Run configurations in phases that depend on each other',
      emptyConfiguration: { phases: [], tasks: [] },
      documentationUrl: 'https://help.keboola.com/flows/flows-legacy/',
    }),
    platformComponent({
      id: FLOW_COMPONENT_ID,
      name: 'Flow',
      description: 'Run configurations in phases with conditional transitions and retries',
      emptyConfiguration: { phases: [], tasks: [] },
      documentationUrl: 'https://help.keboola.com/flows/',
    }),
  ];
}

/** A component of the platform itself (no Docker image runs it): Keboola's type `other`. */
function platformComponent(c: {
  id: string;
  name: string;
  description: string;
  emptyConfiguration: object;
  documentationUrl: string;
}): Component {
  const definition = {
    id: c.id,
    type: 'other',
    name: c.name,
    description: c.description,
    version: 1,
    hasUI: false,
    hasRun: false,
    ico32: '',
    ico64: '',
    data: { definition: { type: 'builder', uri: 'gex', tag: 'latest' }, configuration_format: 'json' },
    flags: [],
    configurationSchema: {},
    emptyConfiguration: c.emptyConfiguration,
    uiOptions: {},
    configurationDescription: null,
    documentationUrl: c.documentationUrl,
  };
  return { id: c.id, type: 'other', name: c.name, definition: fromPlain(definition) };
}
