import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * When the process `pid` started, as the kernel counts it (boot id + start time in clock ticks),
 * or undefined where /proc cannot tell. A lock records its holder's mark so that a pid reused by
 * another process after the holder was killed is not mistaken for the holder.
 */
export function processStartMark(pid: number | 'self' = 'self'): string | undefined {
  try {
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const startTicks = processStartTicks(pid);
    return startTicks ? `${bootId}:${startTicks}` : undefined;
  } catch {
    return undefined;
  }
}

/** The start time of process `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined. */
export function processStartTicks(pid: number | 'self' = 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces and parentheses: count fields after its last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields[19];
    return ticks && /^\d+$/.test(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export type Liveness = 'alive' | 'dead' | 'unknown';

/**
 * Whether process `pid` of this host runs and, when `startTicks` is given (processStartTicks of
 * the process meant), started then: a pid reused by a later process is 'dead'. This process
 * itself counts only when its own start ticks are the ones given.
 */
export function localProcessLiveness(pid: number, startTicks: string | undefined): 'alive' | 'dead' {
  if (!Number.isSafeInteger(pid) || pid <= 0 || !pidExists(pid)) return 'dead';
  if (startTicks === undefined) return 'alive';
  const now = processStartTicks(pid);
  return now === undefined || now === startTicks ? 'alive' : 'dead';
}

/**
 * Whether the process that wrote a lock still runs: only checkable on this host ('unknown'
 * elsewhere). A pid that exists but started at another moment than recorded is another process.
 */
export function holderLiveness(
  holder: { pid: number; host: string; processStart?: string },
  host = os.hostname(),
): Liveness {
  if (holder.host !== host) return 'unknown';
  if (!Number.isSafeInteger(holder.pid) || holder.pid <= 0) return 'dead';
  if (!pidExists(holder.pid)) return 'dead';
  if (holder.processStart) {
    const now = processStartMark(holder.pid);
    if (now !== undefined && now !== holder.processStart) return 'dead';
  }
  return 'alive';
}

/**
 * Who a process is, as records that name their worker keep it (queue jobs, Storage jobs, the
 * worker registry): host and pid, the kernel's start mark, and a random mark of its own. Host and
 * pid alone are not enough: gex is PID 1 in its container, so a restarted container has the pid
 * of the one that died; the start mark tells them apart where /proc exists, the instance mark
 * everywhere this process asks about its own pid.
 */
export interface ProcessIdentity {
  host: string;
  pid: number;
  /** see processStartMark */
  processStart?: string;
  /** random, made once per process */
  instance?: string;
}

let self: ProcessIdentity | undefined;

/** This process's identity (the same object for the whole life of the process). */
export function thisProcess(): ProcessIdentity {
  if (self?.pid !== process.pid) {
    self = {
      host: os.hostname(),
      pid: process.pid,
      processStart: processStartMark(),
      instance: randomBytes(8).toString('hex'),
    };
  }
  return self;
}

/** This process's identity as stored text (JSON). */
export function thisProcessText(): string {
  return JSON.stringify(thisProcess());
}

/**
 * A stored identity read back: JSON as thisProcessText writes it, or `host:pid` as queue jobs
 * named their worker before; undefined for anything else.
 */
export function parseProcessIdentity(text: string | null | undefined): ProcessIdentity | undefined {
  if (!text) return undefined;
  if (text.startsWith('{')) {
    try {
      const value = JSON.parse(text) as Record<string, unknown>;
      if (typeof value.host !== 'string' || typeof value.pid !== 'number') return undefined;
      return {
        host: value.host,
        pid: value.pid,
        ...(typeof value.processStart === 'string' ? { processStart: value.processStart } : {}),
        ...(typeof value.instance === 'string' ? { instance: value.instance } : {}),
      };
    } catch {
      return undefined;
    }
  }
  const legacy = /^(.*):(\d+)$/s.exec(text);
  return legacy ? { host: legacy[1], pid: Number(legacy[2]) } : undefined;
}

/**
 * Whether the process `identity` names still runs. This process itself is 'alive' only when the
 * identity is exactly its own: a record with this host and pid but another instance (or none) was
 * written by an earlier process that had the same pid — a restarted container — so it is 'dead'.
 * Another pid of this host: holderLiveness. Another host: 'unknown'.
 */
export function identityLiveness(identity: ProcessIdentity, host = os.hostname()): Liveness {
  const me = thisProcess();
  if (identity.host === host && identity.pid === me.pid) {
    if (identity.instance !== undefined) return identity.instance === me.instance ? 'alive' : 'dead';
    // written by a gex that recorded no instance mark: it is this process only if it started when this one did
    return identity.processStart !== undefined && identity.processStart === me.processStart ? 'alive' : 'dead';
  }
  return holderLiveness(identity, host);
}

/** identityLiveness of stored text; an unreadable record is 'unknown' (left alone). */
export function storedIdentityLiveness(text: string | null | undefined): Liveness {
  const identity = parseProcessIdentity(text);
  return identity ? identityLiveness(identity) : 'unknown';
}
