import type { FastifyInstance } from 'fastify';
import { excerptQuoted } from '../../common/log-text.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { activateSchedule } from '../../jobs/schedules/schedule-activation.js';
import type { ScheduleRepository } from '../../jobs/schedules/schedule-repository.js';
import { scheduleToWire } from '../../jobs/schedules/schedule-wire.js';
import { StoreError } from '../../store/store-error.js';
import { sessionOf } from '../auth.js';
import { errorHandler } from '../errors/errors.js';
import { sendJson, sendNoContent } from '../http/reply.js';
import { QUEUE_BODY_LIMIT } from './queue.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

function invalid(key: string, message: string): StoreError {
  return StoreError.keboola(KEBOOLA_ERRORS.schedulerValidation, `Invalid request: ${key}: ${message}`, [
    { key, message },
  ]);
}

function idParam(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw notFound(text);
  return Number(text);
}

function notFound(text: string): StoreError {
  return StoreError.keboola(KEBOOLA_ERRORS.schedulerNotFound, `Schedule ${excerptQuoted(text)} not found.`);
}

function writer(token: { readOnly: boolean }): void {
  if (token.readOnly) throw StoreError.accessDenied('A read-only token cannot change schedules.');
}

/**
 * Keboola's Scheduler API (docs/jobs.md#schedules) at the server's origin, with the Storage API's
 * tokens: schedules belong to the token's project; another project's are not found.
 */
export function scheduleRoutes(app: FastifyInstance, schedules: ScheduleRepository): void {
  // the Scheduler API's error body (a numeric code); a larger body gets 413 naming this limit, not the Storage API's
  app.setErrorHandler(errorHandler(QUEUE_BODY_LIMIT, 'service'));

  app.post<{ Body: JsonValue | undefined }>('/schedules', { bodyLimit: QUEUE_BODY_LIMIT }, async (request, reply) => {
    const { token, store } = sessionOf(request);
    writer(token);
    const body = request.body;
    if (!isJsonObject(body)) throw invalid('body', 'expected {"configurationId": "…", "configurationVersionId": "…"}');
    const id = body.get('configurationId');
    const configurationId = typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : id;
    if (typeof configurationId !== 'string' || configurationId === '' || configurationId.length > 256)
      throw invalid('configurationId', 'required: the id of a keboola.scheduler configuration');
    const version = body.get('configurationVersionId');
    let versionId: number | undefined;
    if (version !== undefined && version !== null && version !== '') {
      const text = String(version);
      if (!/^\d{1,9}$/.test(text)) throw invalid('configurationVersionId', 'expected a version number');
      versionId = Number(text);
    }
    const schedule = await activateSchedule(store, token, schedules, configurationId, versionId);
    return sendJson(reply, 201, scheduleToWire(schedule, []));
  });

  app.get<{ Querystring: Record<string, unknown> }>('/schedules', async (request, reply) => {
    const { token } = sessionOf(request);
    const filter = request.query.configurationId;
    const list = (await schedules.list(token.projectId)).filter(
      (s) => typeof filter !== 'string' || s.configurationId === filter,
    );
    const executions = await schedules.executions(list.map((s) => s.id));
    return sendJson(
      reply,
      200,
      list.map((s) => scheduleToWire(s, executions.get(s.id) ?? [])),
    );
  });

  app.get<{ Params: { id: string } }>('/schedules/:id', async (request, reply) => {
    const schedule = await schedules.get(sessionOf(request).token.projectId, idParam(request.params.id));
    if (!schedule) throw notFound(request.params.id);
    const executions = await schedules.executions([schedule.id]);
    return sendJson(reply, 200, scheduleToWire(schedule, executions.get(schedule.id) ?? []));
  });

  app.delete<{ Params: { id: string } }>('/schedules/:id', async (request, reply) => {
    const { token } = sessionOf(request);
    writer(token);
    if (!(await schedules.remove(token.projectId, idParam(request.params.id)))) throw notFound(request.params.id);
    return sendNoContent(reply);
  });

  app.delete<{ Params: { configurationId: string } }>('/configurations/:configurationId', async (request, reply) => {
    const { token } = sessionOf(request);
    writer(token);
    await schedules.removeByConfiguration(token.projectId, request.params.configurationId.slice(0, 256));
    return sendNoContent(reply);
  });
}
