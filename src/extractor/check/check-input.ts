import { ConfigError, UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import type { SecretMasker } from '../../common/secret-masker.js';
import type { JsonObject } from '../../json/index.js';
import { AwsSigner, awsCredentials, SYSTEM_RUNTIME, type AuthMethod, type AuthRuntime } from '../auth/index.js';
import { allowedHostsRule } from '../config/allowed-hosts.js';
import { findUnknownKeys, unknownKeyWarning } from '../config/unknown-keys.js';
import type { DataFolderInput } from '../data-folder.js';
import { ExtractorState } from '../extractor-state.js';
import { UserFunctions } from '../functions/user-functions.js';
import { buildHttpRequest } from '../http/request-builder.js';
import type { HttpRequest } from '../http/types.js';
import { evaluateUserData, jobTemplate, topLevelUserData } from '../jobs/job-instance.js';
import { createPaginator } from '../pagination/factory.js';
import { checkBeforeRequests, prepareIteration, type IterationSetup } from '../pre-request-checks.js';
import { probeFirstRequest, type ProbeOptions } from './probe.js';
import type { JobCheck, RequestPreview, UnitCheck } from './report.js';

export interface CheckInputOptions {
  logger: Logger;
  /** hides secrets: the configuration's `#` values are added to it */
  masker: SecretMasker;
  /** send the first request of each top-level job (`gex check --request`) */
  sendRequests?: Omit<ProbeOptions, 'logger' | 'masker' | 'signer' | 'allowedUrl'>;
  /** unix seconds taken as the run start (`time.currentStart`); tests pin it */
  now?: () => number;
  authRuntime?: Partial<AuthRuntime>;
  signal?: AbortSignal;
}

/** Texts longer than this (a URL with a megabyte of params) are shown cut. */
const SHOWN_LENGTH = 2000;

/**
 * Checks one component input as a run would before its first request — without running: the
 * same validation, output names and allowed hosts, the same user functions and placeholders
 * resolved, and each top-level job's first request built. With `sendRequests` that request is
 * sent and its answer analysed (nothing written to the data folder).
 */
export async function checkInput(
  input: DataFolderInput,
  label: string,
  rowId: string | null,
  options: CheckInputOptions,
): Promise<UnitCheck> {
  const { masker } = options;
  for (const value of [input.parameters, input.authorization, input.state]) masker.addFromConfig(value);
  // unknown keys first: a typo is often what makes a configuration invalid (`jbos` → jobs missing)
  const unit: UnitCheck = {
    label,
    rowId,
    runs: true,
    valid: false,
    warnings: findUnknownKeys(input.parameters).map((u) => masker.mask(unknownKeyWarning(u))),
    jobs: [],
  };
  try {
    const { apiNode, configs } = await checkBeforeRequests(input, () => undefined, options.signal);
    const credentials = awsCredentials(input.parameters);
    const state = new ExtractorState(input.state, (options.now ?? SYSTEM_RUNTIME.now)());
    const shared = {
      input,
      apiNode,
      functions: new UserFunctions(),
      time: state.timeContext(),
      logger: options.logger,
      secrets: masker,
      authRuntime: options.authRuntime,
    };
    // every iteration is checked before any request is sent, as a run fails before its first one
    const setups = configs.map((config) => prepareIteration(config, shared));
    const planned = setups.map((setup, i) => ({
      setup,
      iteration: configs.length > 1 ? i + 1 : null,
      requests: firstRequests(setup, shared.functions),
    }));
    unit.valid = true;
    const signer = credentials
      ? new AwsSigner(credentials, options.authRuntime?.now ?? SYSTEM_RUNTIME.now, masker)
      : undefined;
    for (const { setup, iteration, requests } of planned) {
      for (const { job, request, injected } of requests) {
        const check: JobCheck = {
          iteration,
          job: masker.mask(job.dataType),
          request: await preview(request, setup.auth, signer !== undefined, masker),
        };
        unit.jobs.push(check);
        if (options.sendRequests) {
          check.response = await probeFirstRequest(
            request,
            { job, injected, setup },
            {
              ...options.sendRequests,
              logger: options.logger,
              masker,
              signer,
              allowedUrl: allowedHostsRule(input.imageParameters),
              signal: options.signal,
            },
          );
        }
      }
    }
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    unit.error = {
      message: masker.mask(error.message),
      path: error instanceof ConfigError ? masker.mask(error.path) : undefined,
      code: error.gexCode,
    };
  }
  return unit;
}

interface FirstRequest {
  job: IterationSetup['jobs'][number];
  request: HttpRequest;
  /** the userData columns of its records */
  injected: JsonObject;
}

/** The first request of each top-level job, built as the job runner builds it (functions evaluated). */
function firstRequests(setup: IterationSetup, functions: UserFunctions): FirstRequest[] {
  const ctx = { functions, contexts: setup.contexts };
  const configUserData = evaluateUserData(setup.config.get('userData'), 'userData', ctx);
  return setup.jobs.map((job) => {
    const template = jobTemplate(job, job.endpoint, ctx);
    const first = createPaginator(setup.api.pagination, 'parameters.api.pagination', job.scroller).first(template);
    return {
      job,
      request: buildHttpRequest(first, job.headers, setup.api),
      injected: topLevelUserData(job, configUserData, ctx),
    };
  });
}

/** A login is a request: a preview never sends one. */
class LoginNotSent extends Error {}

/**
 * The request as it would leave, with what the auth adds — unless the auth needs a request of its
 * own (a login): then as built, with a note. Secrets are hidden, long texts cut.
 */
async function preview(
  request: HttpRequest,
  auth: AuthMethod | null,
  signed: boolean,
  masker: SecretMasker,
): Promise<RequestPreview> {
  const notes: string[] = [];
  let shown = request;
  if (auth) {
    try {
      shown = await auth.beforeRequest(request, () => Promise.reject(new LoginNotSent()));
    } catch (error) {
      if (!(error instanceof LoginNotSent)) throw error;
      notes.push(`the '${auth.type}' authentication logs in first; its login request and what it adds are not shown`);
    }
  }
  if (signed) notes.push('signed with AWS Signature Version 4 when sent');
  const show = (text: string) => cut(masker.mask(text));
  return {
    method: shown.method,
    url: show(shown.url),
    headers: shown.headers.map(([name, value]) => [show(name), show(value)]),
    body: shown.body === undefined ? undefined : show(shown.body),
    notes,
  };
}

function cut(text: string): string {
  return text.length <= SHOWN_LENGTH ? text : `${text.slice(0, SHOWN_LENGTH)}…(${text.length} characters)`;
}
