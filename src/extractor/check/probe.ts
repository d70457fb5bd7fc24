import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import type { SecretMasker } from '../../common/secret-masker.js';
import { isJsonObject, type JsonObject } from '../../json/index.js';
import type { JobConfig } from '../config/job-config.js';
import { outputBucket } from '../config/output-names.js';
import { HttpClient, type RequestSigner } from '../http/http-client.js';
import { formatBytes, maxResponseBytesFromEnv, ResponseTooLarge } from '../http/response-size.js';
import { RetryPolicy } from '../http/retry-policy.js';
import type { HttpRequest } from '../http/types.js';
import { OutputWriter } from '../output/output-writer.js';
import { compatLevel, type IterationSetup } from '../pre-request-checks.js';
import { findRecords } from '../response/data-field.js';
import { decodeResponse } from '../response/decode-response.js';
import { applyResponseFilter } from '../response/response-filter.js';
import type { ProbeResult } from './report.js';
import type { AllowedUrlRule } from '../config/allowed-hosts.js';

/**
 * The most a check reads of one response: enough for any first page worth looking at, small
 * enough that a hostile or broken API (an endless body, a gzip bomb) costs little.
 */
export const CHECK_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** At most this many top-level keys are listed (a response may have thousands). */
const SHOWN_KEYS = 50;

export interface ProbeOptions {
  logger: Logger;
  masker: SecretMasker;
  signer?: RequestSigner;
  /** `image_parameters.allowed_hosts` as a test of each URL (redirects included) */
  allowedUrl?: AllowedUrlRule | null;
  /** the largest body read (default: CHECK_MAX_RESPONSE_BYTES, or GEX_MAX_RESPONSE_SIZE when smaller) */
  maxResponseBytes?: number;
  /** where the page's tables are written to learn their columns, then removed (default: the OS's) */
  tmpDir?: string;
  /** a clock in milliseconds for the timing (tests pin it) */
  clock?: () => number;
  signal?: AbortSignal;
}

/**
 * Sends a job's first request through the run's HTTP client (its auth, signing, allowed hosts and
 * size limit; no retries) and describes the answer: status, time, the records GE would find and
 * the CSV columns the page gives — learned by the real output writer in a temporary folder that
 * is removed, never in the data folder.
 */
export async function probeFirstRequest(
  request: HttpRequest,
  target: { job: JobConfig; injected: JsonObject; setup: IterationSetup },
  options: ProbeOptions,
): Promise<ProbeResult> {
  const { job, injected, setup } = target;
  const { api, auth, config } = setup;
  const { masker } = options;
  const clock = options.clock ?? (() => performance.now());
  const limit = options.maxResponseBytes ?? Math.min(CHECK_MAX_RESPONSE_BYTES, maxResponseBytesFromEnv());
  const client = new HttpClient({
    retry: new RetryPolicy({ ...api.retry, maxRetries: 0 }),
    connectTimeoutMs: api.connectTimeoutMs,
    requestTimeoutMs: api.requestTimeoutMs,
    logger: options.logger,
    auth,
    signer: options.signer,
    tls: { caCertificate: api.caCertificate, clientCertificate: api.clientCertificate },
    allowedUrl: options.allowedUrl,
    maxResponseBytes: limit,
    signal: options.signal,
  });
  const started = clock();
  const elapsed = () => Math.round(clock() - started);
  try {
    const response = await client.send(request);
    const result: ProbeResult = {
      status: response.status,
      statusMessage: masker.mask(response.statusMessage),
      ms: elapsed(),
      bytes: response.body.length,
    };
    const decoded = decodeResponse(response, request, api.ignoreErrors, (text) => masker.mask(text));
    const found = findRecords(decoded, job.dataField);
    result.records = found.records.length;
    if (found.records.length === 0) {
      if (isJsonObject(decoded))
        result.topLevelKeys = [...decoded.keys()].slice(0, SHOWN_KEYS).map((k) => masker.mask(k));
      return result;
    }
    const data = applyResponseFilter(
      found.records,
      job.responseFilter,
      job.responseFilterDelimiter,
      compatLevel(config),
    );
    result.tables = await tablesOfPage(data, job, injected, setup, options);
    return result;
  } catch (error) {
    if (error instanceof ResponseTooLarge) {
      return {
        ms: elapsed(),
        warning: `the response is larger than the ${formatBytes(limit)} a check reads: not analysed (a run reads up to $GEX_MAX_RESPONSE_SIZE)`,
      };
    }
    if (!(error instanceof UserError)) throw error;
    return { ms: elapsed(), error: masker.mask(error.message) };
  } finally {
    client.close();
  }
}

/** The tables one page gives, with their columns, from the real output writer in a temporary folder. */
async function tablesOfPage(
  data: ReturnType<typeof applyResponseFilter>,
  job: JobConfig,
  injected: JsonObject,
  setup: IterationSetup,
  options: ProbeOptions,
): Promise<ProbeResult['tables']> {
  const dir = await mkdtemp(path.join(options.tmpDir ?? os.tmpdir(), 'gex-check-'));
  try {
    const output = new OutputWriter(dir, options.logger, undefined, dir);
    const parser = await output.parserFor(outputBucket(setup.config, setup.api.name), {
      incremental: false,
      mappings: setup.config.get('mappings'),
      compatLevel: compatLevel(setup.config),
    });
    try {
      parser.process(data, job.dataType, injected);
      await parser.settle();
    } catch (error) {
      await output.dispose();
      throw error;
    }
    const tables = await output.finish(options.signal);
    return tables.map((t) => ({
      table: options.masker.mask(t.file),
      columns: t.columns.map((c) => options.masker.mask(c)),
    }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
