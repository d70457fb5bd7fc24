import type { IncomingHttpHeaders } from 'node:http';

/**
 * The shapes requests and responses have between the parts of the extractor (request building,
 * auth, the client, response decoding), kept apart from the client so auth methods can send a
 * request (a login) without depending on the client itself.
 */

/** A request ready to send: absolute URL, ordered headers, optional body. */
export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Array<[string, string]>;
  body?: string;
}

export interface HttpResponse {
  status: number;
  statusMessage: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** attempts made, 1 = no retry */
  attempts: number;
}

/** Sends a request through the client's retries, limits and signing; resolves with the final response. */
export type Send = (request: HttpRequest, options?: { signal?: AbortSignal }) => Promise<HttpResponse>;
