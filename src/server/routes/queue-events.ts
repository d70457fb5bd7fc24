import type { FastifyInstance } from 'fastify';
import type { JsonValue } from '../../json/index.js';
import type { JobRepository } from '../../jobs/job-repository.js';
import type { EventPosition } from '../../jobs/job-record.js';
import { wireTime } from '../../jobs/job-wire.js';
import { StoreError } from '../../store/store-error.js';
import { sessionOf } from '../auth.js';
import { sendJson } from '../http/reply.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

const DEFAULT_LIMIT = 100;
/** an event's id is its job's id and its number in the job's log (a log keeps far fewer lines) */
const PER_JOB = 1_000_000;
const eventId = (e: EventPosition) => e.jobId * PER_JOB + e.seq;
const positionOf = (id: number): EventPosition => ({ jobId: Math.floor(id / PER_JOB), seq: id % PER_JOB });
const MAX_LIMIT = 1000;
const TYPES = { info: 'info', warning: 'warn', error: 'error' } as const;

/**
 * `GET /v2/storage/events?runId=…`: the log lines of the token's project's queue jobs with that
 * run id (or runs under it), in Keboola's event shape, newest first, as its clients show a job's log.
 * `sinceId` (events after that id) and `maxId` (up to that id, inclusive) page through them, as
 * Keboola's events API does; the newest `limit` are chosen in SQL.
 * Without `runId` gex has no events to list (it keeps no other events).
 */
export function queueEventRoutes(app: FastifyInstance, jobs: JobRepository): void {
  app.get<{ Querystring: Record<string, string | string[] | undefined> }>('/events', async (request, reply) => {
    const one = (name: string) => {
      const v = request.query[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const limitText = one('limit') ?? String(DEFAULT_LIMIT);
    if (!/^\d{1,6}$/.test(limitText) || Number(limitText) > MAX_LIMIT) {
      throw StoreError.keboola(
        KEBOOLA_ERRORS.validation,
        `Invalid parameters - limit: a whole number from 0 to ${MAX_LIMIT}.`,
      );
    }
    const position = (name: string): EventPosition | undefined => {
      const text = one(name);
      if (text === undefined || text === '') return undefined;
      if (!/^\d{1,15}$/.test(text))
        throw StoreError.keboola(KEBOOLA_ERRORS.validation, `Invalid parameters - ${name}: an event id.`);
      return positionOf(Number(text));
    };
    const after = position('sinceId');
    const atMost = position('maxId');
    const runId = one('runId');
    const { token } = sessionOf(request);
    if (!runId) return sendJson(reply, 200, []);
    const newest = await jobs.events(token.projectId, {
      runId: runId.slice(0, 1100),
      after,
      atMost,
      newestFirst: true,
      limit: Number(limitText),
    });
    return sendJson(
      reply,
      200,
      newest.map(
        (e): JsonValue =>
          new Map<string, JsonValue>([
            ['id', String(eventId(e))],
            ['event', 'ext.gex.job-log'],
            ['component', 'queue'],
            ['message', e.message],
            ['description', ''],
            ['type', TYPES[e.level]],
            ['runId', runId],
            ['created', wireTime(e.created)],
            ['params', new Map<string, JsonValue>([['jobId', String(e.jobId)]])],
            ['results', []],
            ['performance', []],
            ['attachments', []],
          ]),
      ),
    );
  });
}
