import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * When the process `pid` started, as the kernel counts it (boot id + start time in clock ticks),
 * or undefined where /proc cannot tell. A lock records its holder's mark so that a pid reused by
 * another process after the holder was killed is not mistaken for the holder.
 */
export function processStartMark(pid: number | 'self' = 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces and parentheses: count fields after its last ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTicks = fields[19];
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return startTicks ? `${bootId}:${startTicks}` : undefined;
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
