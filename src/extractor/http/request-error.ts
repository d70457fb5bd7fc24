import { RequestError } from 'got';

/**
 * `error` as got's RequestError when it is a network failure that got's stream mode handed on as
 * it came (on Node 24 a TLS handshake's `EPROTO` reaches the stream's 'error' event unwrapped, from
 * the request's end), so that every network failure meets the same retry and message rules;
 * anything else as it is. `stream` is the got stream the error came from.
 */
export function asRequestError(error: unknown, stream: unknown): unknown {
  if (error instanceof RequestError || !(error instanceof Error)) return error;
  const system = error as NodeJS.ErrnoException;
  if (typeof system.code !== 'string' || (system.syscall === undefined && system.errno === undefined)) return error;
  return new RequestError(error.message, system, stream as ConstructorParameters<typeof RequestError>[2]);
}
