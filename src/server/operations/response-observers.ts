import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Told of every answered request (the request log, metrics), with the route it matched. */
export type ResponseObserver = (request: FastifyRequest, reply: FastifyReply, route: string) => void;

/** The route a request matched (`/v2/storage/components/:componentId`), or `unmatched` (404s, framework errors). */
export function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

/**
 * One onResponse hook for all observers: the route is looked up once (fastify builds an object
 * for it on every read) and fastify iterates one hook per request, not one per observer.
 */
export function observeResponses(app: FastifyInstance, observers: ResponseObserver[]): void {
  if (observers.length === 0) return;
  app.addHook('onResponse', (request, reply, done) => {
    const route = routeOf(request);
    for (const observe of observers) observe(request, reply, route);
    done();
  });
}
