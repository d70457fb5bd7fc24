/** What a `uri` field is built from: the request's protocol and Host header (a FastifyRequest is one). */
export interface RequestOrigin {
  readonly protocol: string;
  readonly host: string;
}

/** A Host header gex repeats in `uri` fields: a name, IPv4 or bracketed IPv6 address, optional port. */
const SAFE_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** Keboola's absolute address of a resource; the path alone when the Host header is not a plain host. */
export function absoluteUri(request: RequestOrigin, path: string): string {
  return SAFE_HOST.test(request.host) ? `${request.protocol}://${request.host}${path}` : path;
}
