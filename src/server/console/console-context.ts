import type { FastifyReply, FastifyRequest } from 'fastify';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import type { ConfigStore } from '../../store/config-store.js';
import type { TokenInfo } from '../../store/types.js';
import type { JobRepository } from '../../jobs/job-repository.js';
import type { QueueHooks } from '../../jobs/job-platform.js';
import type { ScheduleRepository } from '../../jobs/schedules/schedule-repository.js';
import type { ServerBackend } from '../backend.js';
import type { ReadCache } from '../operations/read-cache.js';
import type { PreviewBounds } from '../routes/tables.js';
import type { ConsoleSession, ConsoleSessions } from './console-sessions.js';

/** What the console reads and acts on: the same parts the APIs serve. */
export interface ConsoleOptions {
  backend: ServerBackend;
  queue?: JobRepository;
  schedules?: ScheduleRepository;
  queueHooks: QueueHooks;
  /** the data previews' bounds, shared with the Storage API's (one budget for the server) */
  previews?: PreviewBounds;
  sessions?: ConsoleSessions;
  /** what is read from the store, reused while it has not changed (shared with the APIs) */
  reads?: ReadCache;
}

/** What each page module gets. */
export interface ConsolePages extends ConsoleOptions {
  sessions: ConsoleSessions;
}

/** The pages' sections, in the order of the navigation. */
export const SECTIONS = ['Jobs', 'Configurations', 'Tables', 'Schedules', 'Flows'] as const;
export type Section = (typeof SECTIONS)[number];

/** Who a console request is for: its session, the token's project, its store. */
export interface ConsoleUser {
  session: ConsoleSession;
  token: TokenInfo;
  store: ConfigStore;
}

const users = new WeakMap<FastifyRequest, ConsoleUser>();

export function setUser(request: FastifyRequest, user: ConsoleUser): void {
  users.set(request, user);
}

/** The request's user; only on routes behind the console's login. */
export function userOf(request: FastifyRequest): ConsoleUser {
  const user = users.get(request);
  if (!user) throw new Error('console route without a session');
  return user;
}

/** A text field of a form or query (first value when repeated); undefined when absent or not text. */
export function field(body: JsonValue | undefined, name: string): string | undefined {
  if (!isJsonObject(body)) return undefined;
  const value = body.get(name);
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/** What every page's layout shows: the project, the token's kind, the CSRF token for its forms. */
export function pageData(request: FastifyRequest, section: Section | undefined, data: object): object {
  const user = userOf(request);
  return {
    ...data,
    section,
    sections: SECTIONS,
    project: user.token.projectName,
    projectId: user.token.projectId,
    tokenDescription: user.token.description,
    readOnly: user.token.readOnly,
    csrf: user.session.csrf,
  };
}

/** Renders a console page (its layout around it) with the user's data. */
export async function renderPage(
  request: FastifyRequest,
  reply: FastifyReply,
  view: string,
  section: Section | undefined,
  data: object,
  status = 200,
): Promise<FastifyReply> {
  const html = await reply.viewAsync(view, pageData(request, section, data));
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}
