import type { FastifyReply, FastifyRequest } from 'fastify';
import { stringifyExact, type JsonValue } from '../../json/index.js';
import { sessionOf } from '../auth.js';

/**
 * Sends a JSON body written by gex's exact encoder (`[]` vs `{}`, key order and `1.0` survive).
 * The body goes out as a Buffer so that fastify leaves `Content-Type: application/json` exactly as
 * set: the PHP client decodes JSON only when the header is exactly that (no `; charset=…`).
 */
export function sendJson(reply: FastifyReply, status: number, value: JsonValue): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'application/json')
    .send(Buffer.from(stringifyExact(value)));
}

/**
 * 200 with the body of a GET that depends only on the token, the URL (and with `byHost` the Host
 * header) and the stored data: reused from the read cache while the store is unchanged.
 */
export async function sendCachedJson(
  request: FastifyRequest,
  reply: FastifyReply,
  build: () => Promise<JsonValue>,
  options: { byHost?: boolean } = {},
): Promise<FastifyReply> {
  const session = sessionOf(request);
  // bodies with absolute `uri` fields depend on the Host header too
  const key = options.byHost
    ? `${session.token.id} ${request.host} ${request.url}`
    : `${session.token.id} ${request.url}`;
  const body = await session.reads.body(key, build);
  return reply.code(200).header('content-type', 'application/json').send(body);
}

/** 204 with an empty body (deletes). */
export function sendNoContent(reply: FastifyReply): FastifyReply {
  return reply.code(204).send();
}
