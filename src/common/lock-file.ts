import { randomBytes } from 'node:crypto';
import { closeSync, constants, lstatSync, openSync, readSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { UserError } from './errors.js';
import os from 'node:os';
import { holderLiveness, processStartMark } from './process-liveness.js';

/** Who holds a lock: written into the lock file, shown to whoever finds it taken. */
export interface LockHolder {
  pid: number;
  host: string;
  /** ISO time the lock was taken */
  since: string;
  /** what the holder runs, in words (e.g. "configuration 123 of ex-generic-v2") */
  configuration: string;
  /** see processStartMark: tells a reused pid from the holder */
  processStart?: string;
  /** unique per acquisition: a holder releases only its own file */
  token: string;
}

export type LockAttempt = { acquired: true } | { acquired: false; holder: LockHolder | null };

/** A lock file being created right now is empty for a moment; one that stays unreadable this long was left by a crash. */
const UNREADABLE_STALE_MS = 10_000;
/** Taking over a stale lock takes milliseconds; a takeover guard older than this was left by a crash. */
const GUARD_STALE_MS = 10_000;

/**
 * A lock held by the existence of a file, created atomically (O_EXCL) and holding its holder's
 * pid, host, start time and configuration. A lock whose holder is gone (its pid is not alive on
 * this host) is taken over; one held on another host is never taken over (its liveness cannot be
 * checked). Released by `release()` and, as a last resort, when the process exits (also through
 * process.exit on a second signal); a kill -9 leaves the file, which the next run finds stale.
 */
export class LockFile {
  private held: LockHolder | null = null;
  private readonly releaseOnExit = () => this.release();

  constructor(
    readonly file: string,
    private readonly configuration: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  get isHeld(): boolean {
    return this.held !== null;
  }

  /** One attempt, without waiting: takes the lock (or a stale one), else says who holds it. */
  tryAcquire(): LockAttempt {
    if (this.held) return { acquired: true };
    // a few rounds: a stale lock removed by us or another process is raced for again
    let holder: LockHolder | null = null;
    for (let round = 0; round < 3; round++) {
      const mine = this.newHolder();
      if (this.create(mine)) {
        this.held = mine;
        process.on('exit', this.releaseOnExit);
        return { acquired: true };
      }
      const found = this.read();
      if (found === 'missing') continue;
      holder = found.holder;
      if (!this.isStale(found)) return { acquired: false, holder };
      this.takeOver(found.text);
    }
    return { acquired: false, holder };
  }

  /** Removes the lock file if it is still this holder's. Synchronous: it also runs on process exit. */
  release(): void {
    if (!this.held) return;
    const token = this.held.token;
    this.held = null;
    process.off('exit', this.releaseOnExit);
    let found: ReturnType<LockFile['read']>;
    try {
      found = this.read();
    } catch {
      return; // no longer a lock file gex can read (replaced by a link?): not ours to remove
    }
    if (found !== 'missing' && found.holder?.token === token) unlinkQuietly(this.file);
  }

  private newHolder(): LockHolder {
    return {
      pid: process.pid,
      host: os.hostname(),
      since: this.now().toISOString(),
      configuration: this.configuration,
      processStart: processStartMark(),
      token: randomBytes(8).toString('hex'),
    };
  }

  private create(holder: LockHolder): boolean {
    let fd: number;
    try {
      fd = openSync(this.file, 'wx', 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
    try {
      writeSync(fd, `${JSON.stringify(holder)}\n`);
    } finally {
      closeSync(fd);
    }
    return true;
  }

  private read(): { text: string; holder: LockHolder | null; mtimeMs: number } | 'missing' {
    try {
      const stat = lstatSync(this.file);
      // a link planted at the lock's name is neither read through nor ever taken over (removed)
      if (stat.isSymbolicLink()) {
        throw new UserError(
          'GEX_RUN_LOCKED',
          `The lock file ${this.file} is a symbolic link, which gex neither reads nor removes. Remove it if no run is using it.`,
        );
      }
      const mtimeMs = stat.mtimeMs;
      const text = readHead(this.file);
      return { text, holder: parseHolder(text), mtimeMs };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
      throw error;
    }
  }

  private isStale(found: { holder: LockHolder | null; mtimeMs: number }): boolean {
    if (!found.holder) return this.now().getTime() - found.mtimeMs > UNREADABLE_STALE_MS;
    return holderLiveness(found.holder) === 'dead';
  }

  /**
   * Removes a stale lock file — only while holding a takeover guard (itself an O_EXCL file), and
   * only if the file still holds the stale text: two runs finding the same stale lock cannot both
   * remove it, and neither removes a lock another run has just taken.
   */
  private takeOver(staleText: string): void {
    const guard = `${this.file}.takeover`;
    let fd: number;
    try {
      fd = openSync(guard, 'wx', 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (this.now().getTime() - statSync(guard).mtimeMs > GUARD_STALE_MS) unlinkQuietly(guard);
      } catch {
        // removed meanwhile
      }
      return;
    }
    try {
      closeSync(fd);
      const current = this.read();
      if (current !== 'missing' && current.text === staleText) unlinkQuietly(this.file);
    } finally {
      unlinkQuietly(guard);
    }
  }
}

/** A lock file is a few hundred bytes; whatever else sits there is read no further than this. */
const MAX_LOCK_BYTES = 4096;

function readHead(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const buffer = Buffer.alloc(MAX_LOCK_BYTES);
    const length = readSync(fd, buffer, 0, MAX_LOCK_BYTES, 0);
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function parseHolder(text: string): LockHolder | null {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid !== 'number' || typeof value.host !== 'string' || typeof value.since !== 'string') return null;
    return {
      pid: value.pid,
      host: value.host,
      since: value.since,
      configuration: typeof value.configuration === 'string' ? value.configuration : 'unknown',
      processStart: typeof value.processStart === 'string' ? value.processStart : undefined,
      token: typeof value.token === 'string' ? value.token : '',
    };
  } catch {
    return null;
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** "pid 123 on host h since 2026-…, running configuration 7 of ex-generic-v2" */
export function describeHolder(holder: LockHolder | null): string {
  if (!holder) return 'a run whose lock file cannot be read';
  return `pid ${holder.pid} on host ${printable(holder.host)} since ${printable(holder.since)}, running ${printable(holder.configuration)}`;
}

/** Text from a lock file (anyone who can write the folder can write it) as one short log-safe line. */
function printable(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}
