import type { FastifyInstance, FastifyRequest } from 'fastify';
import { excerptQuoted } from '../../common/log-text.js';
import type { JsonValue } from '../../json/index.js';
import { newJobFromRequest } from '../../jobs/job-request.js';
import type { JobRepository } from '../../jobs/job-repository.js';
import type { QueueHooks } from '../../jobs/job-platform.js';
import { jobToWire } from '../../jobs/job-wire.js';
import { searchFromQuery, type QueryParams } from '../../jobs/search-query.js';
import { StoreError } from '../../store/store-error.js';
import { absoluteUri } from '../../store/wire/absolute-uri.js';
import { sessionOf } from '../auth.js';
import { errorHandler } from '../errors/errors.js';
import { sendJson } from '../http/reply.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/** A create body is a few hundred bytes; anything near this is not a job request. */
export const QUEUE_BODY_LIMIT = 1024 * 1024;

/** What the server tells whoever runs jobs (the embedded pool): wake up, or stop a job. */
/** The queue's base URL: the server's origin (Keboola's `https://queue.<stack>`). */
export function queueBase(request: FastifyRequest): string {
  return absoluteUri(request, '');
}

function jobIdParam(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw notFound(text);
  return Number(text);
}

function notFound(text: string): StoreError {
  return new StoreError(404, KEBOOLA_ERRORS.queueJobNotFound.code, `Job ${excerptQuoted(text)} not found.`);
}

/**
 * Keboola's Job Queue API (docs/jobs.md) at the server's origin, with the Storage API's tokens:
 * a job belongs to the token's project; another project's jobs are not found.
 */
export function queueRoutes(app: FastifyInstance, jobs: JobRepository, hooks: QueueHooks): void {
  // the Queue API's error body (a numeric code); a larger body gets 413 naming this limit, not the Storage API's
  app.setErrorHandler(errorHandler(QUEUE_BODY_LIMIT, 'service'));

  app.post<{ Body: JsonValue | undefined }>('/jobs', { bodyLimit: QUEUE_BODY_LIMIT }, async (request, reply) => {
    const session = sessionOf(request);
    const header = request.headers['x-kbc-runid'];
    const runId = Array.isArray(header) ? header[0] : header;
    const job = await jobs.create(await newJobFromRequest(request.body, runId, session.token, session.store));
    hooks.created(job);
    return sendJson(reply, 201, jobToWire(job, queueBase(request)));
  });

  app.get<{ Params: { jobId: string } }>('/jobs/:jobId', async (request, reply) => {
    const job = await jobs.get(sessionOf(request).token.projectId, jobIdParam(request.params.jobId));
    if (!job) throw notFound(request.params.jobId);
    return sendJson(reply, 200, jobToWire(job, queueBase(request)));
  });

  app.post<{ Params: { jobId: string } }>(
    '/jobs/:jobId/kill',
    { bodyLimit: QUEUE_BODY_LIMIT },
    async (request, reply) => {
      const { token } = sessionOf(request);
      if (token.readOnly) throw StoreError.accessDenied('A read-only token cannot kill jobs.');
      const job = await jobs.kill(token.projectId, jobIdParam(request.params.jobId));
      if (!job) throw notFound(request.params.jobId);
      hooks.killed(job);
      return sendJson(reply, 200, jobToWire(job, queueBase(request)));
    },
  );

  app.get<{ Querystring: QueryParams }>('/search/jobs', async (request, reply) => {
    const found = await jobs.search(sessionOf(request).token.projectId, searchFromQuery(request.query));
    const base = queueBase(request);
    return sendJson(
      reply,
      200,
      found.map((job) => jobToWire(job, base)),
    );
  });
}
