/**
 * What a failure of node-postgres means for the store: a unique violation, a transaction the
 * database aborted and that may simply be run again, or a database that cannot be used right now.
 */

interface PgErrorLike {
  code?: string;
  message?: string;
}

const UNIQUE_VIOLATION = '23505';
/** serialization_failure, deadlock_detected: the whole transaction can be run again */
const RETRYABLE = new Set(['40001', '40P01']);
/** sockets that never connected or broke */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);
/**
 * Server states of "not now": shutting down or starting (57P01–57P03), too many connections
 * (53300), statement or lock timeout (57014, 55P03), and what a missing database or refused
 * login look like (3D000, 28xxx) — a deployment fault, reported the same way.
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '57014',
  '55P03',
  '3D000',
  '28000',
  '28P01',
]);
/** node-postgres and pg-pool report lost and timed-out connections by message only */
const UNAVAILABLE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /Connection terminated/i,
  /not queryable/i,
  /timeout expired/i,
];

export function isUniqueViolation(error: unknown): boolean {
  return (error as PgErrorLike)?.code === UNIQUE_VIOLATION;
}

export function isRetryableConflict(error: unknown): boolean {
  return RETRYABLE.has((error as PgErrorLike)?.code ?? '');
}

export function isUnavailable(error: unknown): boolean {
  const { code = '', message = '' } = (error as PgErrorLike) ?? {};
  if (SOCKET_CODES.has(code) || code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code)) return true;
  if (error instanceof AggregateError) return error.errors.some(isUnavailable); // localhost tries IPv6 and IPv4
  return UNAVAILABLE_MESSAGES.some((m) => m.test(message));
}

/** A short reason for the user: the server's message, or the socket error's. */
export function unavailableReason(error: unknown): string {
  const { code, message } = (error as PgErrorLike) ?? {};
  if (code === '57014') return `the database did not answer in time (${message})`;
  if (error instanceof AggregateError && error.errors.length > 0) return unavailableReason(error.errors[0]);
  return message || code || String(error);
}
