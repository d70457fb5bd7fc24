import { ConfigError, UserError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import type { SecretMasker } from '../common/secret-masker.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';
import { phpEmpty, phpIntCast } from '../php/index.js';
import { checkAllowedHosts } from './config/allowed-hosts.js';
import { apiName, buildApiSettings, type ApiSettings } from './config/api-settings.js';
import { parseJobList, type JobConfig } from './config/job-config.js';
import { checkOutputNames, outputBucket } from './config/output-names.js';
import { findUnknownKeys, type UnknownKey } from './config/unknown-keys.js';
import { validateParameters } from './config/validate.js';
import type { DataFolderInput } from './data-folder.js';
import { flattenContext, type FunctionContexts, type UserFunctions } from './functions/user-functions.js';
import { createAuth, type AuthMethod, type AuthRuntime } from './auth/index.js';

/**
 * What is checked of a configuration before any request leaves — by a run (`extract()`) and, without
 * running, by `gex check` and `gex run --dry-run`: one definition, so a check passes exactly when a
 * run would get past these checks.
 */

/** Infrastructure options of GE that gex does not offer: refused, never silently ignored. */
function refuseUnsupported(parameters: JsonObject): void {
  const refuse = (where: string, what: string, fix: string) => {
    throw new ConfigError(where, `${what} is not supported by gex`, fix);
  };
  if (!phpEmpty(parameters.get('sshProxy')))
    refuse(
      'parameters.sshProxy',
      'an SSH tunnel',
      'Reach the API directly (e.g. run gex inside the network) or use Generic Extractor',
    );
}

/**
 * The configurations of a run: `config` itself, or one per item of `parameters.iterations`, each
 * the config with the iteration's keys replacing its own (a shallow merge, like GE).
 */
export function iterationConfigs(parameters: JsonObject): JsonObject[] {
  const config = parameters.get('config') as JsonObject;
  const iterations = parameters.get('iterations');
  if (!Array.isArray(iterations) || iterations.length === 0) return [config];
  return iterations.map((iteration, i) => {
    if (!isJsonObject(iteration))
      throw new ConfigError(
        `parameters.iterations[${i}]`,
        'must be an object',
        'An iteration looks like {"accountId": 123}',
      );
    const merged = new Map(config);
    for (const [k, v] of iteration) merged.set(k, v);
    return merged;
  });
}

/**
 * The bucket each configuration of a run (one per iteration) writes its tables' manifests for, as
 * GE names it — `outputBucket`, else `ex-api-<api.name>-<config.id>` — or null where GE names none
 * (the manifests then carry no destination, and a run loads the tables into the default bucket).
 * Undefined when the parameters are not valid enough to tell (the check says why).
 */
export function outputBucketsOf(parameters: JsonValue): Array<string | null> | undefined {
  if (!isJsonObject(parameters) || !isJsonObject(parameters.get('config'))) return undefined;
  const api = parameters.get('api');
  try {
    return iterationConfigs(parameters).map((config) =>
      outputBucket(config, apiName(isJsonObject(api) ? api : new Map())),
    );
  } catch (error) {
    if (error instanceof ConfigError) return undefined;
    throw error;
  }
}

export function compatLevel(config: JsonObject): number {
  const level = config.get('compatLevel');
  return phpEmpty(level) ? 3 : phpIntCast(level);
}

export interface CheckedConfiguration {
  apiNode: JsonObject;
  configs: JsonObject[];
}

/**
 * The checks GE makes before any request (and gex's own: output names, unsupported options).
 * `onUnknownKey` hears of each key GE would ignore, once the configuration is valid (GE ignores
 * them and so does gex, but a typo must not pass unnoticed).
 */
export async function checkBeforeRequests(
  input: DataFolderInput,
  onUnknownKey: (unknown: UnknownKey) => void,
  signal?: AbortSignal,
): Promise<CheckedConfiguration> {
  if (input.action !== 'run') {
    throw new UserError(
      'GEX_ACTION_UNSUPPORTED',
      `Action '${input.action}' is not supported: gex runs extractions only (action "run").`,
    );
  }
  signal?.throwIfAborted();
  const parameters = input.parameters;
  await validateParameters(parameters);
  for (const unknown of findUnknownKeys(parameters)) onUnknownKey(unknown);
  const apiNode = parameters.get('api') as JsonObject;
  refuseUnsupported(parameters);
  const configs = iterationConfigs(parameters);
  checkOutputNames(parameters, configs, apiName(apiNode));
  return { apiNode, configs };
}

/** What every iteration of a run shares, for setting one up. */
export interface IterationShared {
  input: DataFolderInput;
  apiNode: JsonObject;
  functions: UserFunctions;
  /** `time` of user functions: previousStart, currentStart */
  time: Map<string, JsonValue>;
  logger: Logger;
  secrets: SecretMasker;
  authRuntime?: Partial<AuthRuntime>;
}

/** One configuration (of `iterations`) resolved: API settings, auth and jobs, all checked. */
export interface IterationSetup {
  config: JsonObject;
  contexts: FunctionContexts;
  api: ApiSettings;
  auth: AuthMethod | null;
  jobs: JobConfig[];
}

/**
 * Resolves one configuration as a run does before its first request: user functions of the API
 * settings (a `baseUrl` function, headers), the auth with its credentials checked, the jobs and
 * the allowed hosts.
 */
export function prepareIteration(config: JsonObject, shared: IterationShared): IterationSetup {
  const { apiNode, functions, input, logger, secrets } = shared;
  const attributes = new Map(config);
  attributes.delete('jobs');
  const contexts: FunctionContexts = { attr: flattenContext(attributes), time: shared.time };
  const api = buildApiSettings(apiNode, config, (v) => functions.evaluate(v, { attr: contexts.attr }));
  const auth = createAuth({
    api: apiNode,
    attributes,
    attr: contexts.attr,
    authorization: input.authorization,
    settings: api,
    functions,
    logger,
    secrets,
    runtime: shared.authRuntime,
  });
  const jobs = parseJobList(config.get('jobs'), 'parameters.config.jobs');
  checkAllowedHosts(input.imageParameters, api.baseUrl, jobs);
  return { config, contexts, api, auth, jobs };
}
