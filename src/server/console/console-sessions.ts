import { randomBytes, timingSafeEqual } from 'node:crypto';

/** A console login: the token it was made with (kept in this process only), and its CSRF secret. */
export interface ConsoleSession {
  readonly id: string;
  /** the Storage token's text: never sent back to the browser */
  readonly token: string;
  readonly csrf: string;
  /** epoch ms: the session ends then, used or not */
  readonly expiresAt: number;
  /** epoch ms of its last request: idle longer than IDLE_MS, it ends */
  lastSeen: number;
}

export interface SessionLimits {
  /** a session's whole life (default 12 h) */
  lifetimeMs: number;
  /** a session unused this long ends (default 1 h) */
  idleMs: number;
  /** sessions held at once; the least recently used ends first past it (default 10,000) */
  max: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { lifetimeMs: 12 * 3600_000, idleMs: 3600_000, max: 10_000 };

const secret = () => randomBytes(32).toString('base64url');

/** Whether two secrets are equal, in time that does not depend on where they differ. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The console's sessions, in this process's memory (a restart logs everyone out): a random id in an
 * HttpOnly cookie names one; the token stays here. Bounded in number, ended by age, idleness,
 * logout, or when the token no longer authenticates (the caller ends it then). The clock is injected.
 */
export class ConsoleSessions {
  // a Map keeps insertion order: re-inserting on use makes its first entry the least recently used
  private readonly sessions = new Map<string, ConsoleSession>();

  constructor(
    private readonly limits: SessionLimits = DEFAULT_SESSION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  create(token: string): ConsoleSession {
    const now = this.now();
    const session: ConsoleSession = {
      id: secret(),
      token,
      csrf: secret(),
      expiresAt: now + this.limits.lifetimeMs,
      lastSeen: now,
    };
    this.sessions.set(session.id, session);
    while (this.sessions.size > this.limits.max) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    return session;
  }

  /** The live session of this id (its use recorded); undefined when none, expired or idle too long. */
  get(id: string | undefined): ConsoleSession | undefined {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (!session) return undefined;
    const now = this.now();
    if (now >= session.expiresAt || now - session.lastSeen >= this.limits.idleMs) {
      this.sessions.delete(id);
      return undefined;
    }
    session.lastSeen = now;
    this.sessions.delete(id);
    this.sessions.set(id, session);
    return session;
  }

  end(id: string): void {
    this.sessions.delete(id);
  }

  /** Ends every session made with this token (it was revoked or no longer authenticates). */
  endToken(token: string): void {
    for (const [id, session] of this.sessions) if (session.token === token) this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** seconds a new session's cookie lives */
  get cookieMaxAgeSeconds(): number {
    return Math.floor(this.limits.lifetimeMs / 1000);
  }
}
