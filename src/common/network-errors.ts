/**
 * Network failures in plain words, and the ones no retry can fix. Generic Extractor retries every
 * curl error it lists (DNS, connect, TLS connect, …) ten times over ~17 minutes; gex keeps that for
 * what may pass — a timeout, a reset or refused connection (a server restarting), a DNS server
 * that does not answer (EAI_AGAIN) — but fails at once on what is the same on every attempt: a
 * host name that does not exist, a certificate that is not trusted, a TLS handshake the server
 * refuses. Used by the extractor's HTTP client and the remote store's.
 */

export interface NetworkError {
  code?: string;
  message?: string;
}

/** Node's certificate verification failures (OpenSSL's X509_V_ERR_* names) and the host name check. */
const CERTIFICATE_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_REJECTED',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** OpenSSL's words for a handshake the server refused or that cannot work: the same on every attempt. */
const REFUSED_HANDSHAKE =
  /alert|wrong version number|unsupported protocol|no protocols available|no shared cipher|handshake failure|unknown protocol|packet length too long|http request/i;

export function isCertificateError(error: NetworkError): boolean {
  return CERTIFICATE_CODES.has(error.code ?? '');
}

/**
 * Why retrying `error` cannot help, in words for the message; undefined when it may. A refused
 * connection is retried (GE's curl code 7): a server that is restarting refuses connections for a
 * moment. `trustCa` names how the caller's user trusts a private CA.
 */
export function unfixableNetworkError(
  error: NetworkError,
  trustCa = 'parameters.api.caCertificate',
): string | undefined {
  const code = error.code ?? '';
  // getaddrinfo's EAI_NONAME/EAI_NODATA: the name server answered that the name has no address
  if (code === 'ENOTFOUND') return 'the host name does not exist (DNS answered that it has no address); check the URL';
  if (isCertificateError(error))
    return `the server's TLS certificate is not accepted (${code}); trust its CA with ${trustCa}, or fix the certificate`;
  if ((code === 'EPROTO' || code.startsWith('ERR_SSL_')) && REFUSED_HANDSHAKE.test(error.message ?? '')) {
    return /wrong version number|http request/i.test(error.message ?? '')
      ? 'the TLS handshake failed: the server does not speak TLS on this port (http:// rather than https://?)'
      : 'the server refused the TLS handshake (no TLS version or cipher in common, or a client certificate it wants)';
  }
  return undefined;
}

/** Codes of a connection that could not be made: nothing on the other side answered. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EAI_AGAIN']);

/**
 * The connection could not be made (refused, no route, the name not resolved for now, no answer
 * within the connect timeout): the host never answered this attempt. A reset, a timeout after
 * connecting, a TLS failure are not: something answered.
 */
export function isConnectFailure(error: NetworkError & { name?: string; event?: string }): boolean {
  if (CONNECT_FAILURES.has(error.code ?? '')) return true;
  // got's timeouts name their phase: lookup and connect come before the server says anything
  return error.name === 'TimeoutError' && (error.event === 'connect' || error.event === 'lookup');
}

/** A few words on what a network error code means, for retry log lines. */
const MEANINGS: Record<string, string> = {
  ETIMEDOUT: 'no answer in time',
  ESOCKETTIMEDOUT: 'no answer in time',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  EPIPE: 'connection closed while sending',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'no local address to connect from',
  EAI_AGAIN: 'DNS did not answer (temporary)',
  ENOTFOUND: 'host name not found',
  EPROTO: 'TLS protocol error',
};

/** `ECONNRESET (connection reset by the server)`; the code alone when it has no meaning here. */
export function describeNetworkError(error: NetworkError): string {
  const code = error.code ?? 'error';
  const meaning = MEANINGS[code] ?? (isCertificateError(error) ? 'certificate not accepted' : undefined);
  return meaning ? `${code} (${meaning})` : code;
}
