import fastifyCookie from '@fastify/cookie';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { StoreError } from '../../store/store-error.js';
import { consoleAssets, consoleDir } from './console-files.js';
import { field, setUser } from './console-context.js';
import { csrfHolds, CSRF_FIELD, crossSite, overHttps, SESSION_COOKIE, setConsoleHeaders } from './console-security.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleOptions, ConsolePages } from './console-context.js';

export type { ConsoleOptions } from './console-context.js';
import { jobPages } from './pages/job-pages.js';
import { tablePages } from './pages/table-pages.js';
import { schedulePages } from './pages/schedule-pages.js';
import { flowPages } from './pages/flow-pages.js';
import { configurationPages } from './pages/configuration-pages.js';

const LOGIN = '/console/login';

/**
 * The web console at `/console` (docs/console.md): server-rendered pages (Eta through fastify's
 * view plugin, escaping every value by default), htmx for the live parts, served from gex itself.
 * Logging in with a Storage token makes a session (an HttpOnly, SameSite=Strict cookie naming
 * it); every page is then that token's view of its project, and every change a POST with the
 * session's CSRF token.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const dir = consoleDir();
  const assets = consoleAssets(dir);
  const pages: ConsolePages = { ...options, sessions: options.sessions ?? new ConsoleSessions() };
  const { sessions, backend } = pages;

  app.get('/', (_request, reply) => reply.redirect('/console', 302));

  await app.register(
    async (scope) => {
      await scope.register(fastifyCookie);
      await scope.register(fastifyView, {
        engine: { eta: new Eta({ views: `${dir}views`, cache: true, autoEscape: true, autoTrim: false }) },
        templates: `${dir}views`,
      });
      scope.addHook('onRequest', async (_request, reply) => setConsoleHeaders(reply));
      scope.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) => {
        const status = error instanceof StoreError ? error.status : (error.statusCode ?? 500);
        if (status >= 500) request.log.error(error);
        const message = status >= 500 ? 'Something went wrong on the server; its log says what.' : error.message;
        return errorPage(reply, status, message);
      });
      scope.setNotFoundHandler(async (_request, reply) => notFoundPage(reply));

      scope.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
        const asset = assets.get(request.params.name);
        if (!asset) return notFoundPage(reply);
        return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
      });

      scope.get('/login', async (_request, reply) => loginPage(reply, 200));
      scope.post<{ Body: unknown }>('/login', async (request, reply) => {
        if (crossSite(request)) return refused(reply);
        const text = field(request.body as never, 'token')?.trim();
        const token = text ? await backend.authenticate(text) : null;
        if (!text || !token)
          return loginPage(reply, 401, 'That token is not valid here. Paste a Storage token of this gex.');
        const session = sessions.create(text);
        void reply.setCookie(SESSION_COOKIE, session.id, {
          path: '/console',
          httpOnly: true,
          sameSite: 'strict',
          secure: overHttps(request),
          maxAge: sessions.cookieMaxAgeSeconds,
        });
        return reply.redirect('/console/jobs', 303);
      });

      // every other page: a live session whose token still authenticates
      await scope.register(async (pagesScope) => {
        pagesScope.addHook('preHandler', async (request, reply) => {
          const session = sessions.get(request.cookies[SESSION_COOKIE]);
          const token = session && (await backend.authenticate(session.token));
          if (!session || !token) {
            if (session) sessions.endToken(session.token);
            if (request.method === 'GET') return reply.redirect(LOGIN, 303);
            return refused(reply);
          }
          if (request.method === 'POST') {
            if (!csrfHolds(request, session, field(request.body as never, CSRF_FIELD))) return refused(reply);
            if (token.readOnly && request.url !== '/console/logout') return readOnlyPage(reply);
          }
          setUser(request, { session, token, store: backend.session(token) });
        });
        pagesScope.get('/', (_request, reply) => reply.redirect('/console/jobs', 302));
        pagesScope.post('/logout', async (request, reply) => {
          const id = request.cookies[SESSION_COOKIE];
          if (id) sessions.end(id);
          void reply.clearCookie(SESSION_COOKIE, { path: '/console' });
          return reply.redirect(LOGIN, 303);
        });
        jobPages(pagesScope, pages);
        configurationPages(pagesScope, pages);
        tablePages(pagesScope, pages);
        schedulePages(pagesScope, pages);
        flowPages(pagesScope, pages);
      });
    },
    { prefix: '/console' },
  );
}

async function loginPage(reply: FastifyReply, status: number, problem?: string): Promise<FastifyReply> {
  const html = await reply.viewAsync('login', { problem, loggedIn: false });
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

/** A page of the error view (no session shown) with this status and message. */
async function errorPage(reply: FastifyReply, status: number, message: string): Promise<FastifyReply> {
  const html = await reply.viewAsync('error', { status, message, loggedIn: false });
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

const notFoundPage = (reply: FastifyReply) => errorPage(reply, 404, 'There is nothing here.');

const refused = (reply: FastifyReply) =>
  errorPage(
    reply,
    403,
    'Refused: this request did not come from a console page of this session. Reload the page and try again.',
  );

const readOnlyPage = (reply: FastifyReply) =>
  errorPage(reply, 403, 'A read-only token cannot change anything: log in with a token that may.');
