import type { JobEvent } from './job-record.js';

type NewEvent = Pick<JobEvent, 'created' | 'level' | 'message'>;

/** Bounds of one job's kept log: lines and bytes in all, and characters of one line. */
export const LOG_LIMITS = { lines: 5000, bytes: 2 * 1024 * 1024, lineChars: 8192 };

/**
 * Splits a child's output into lines and hands them on in batches, within LOG_LIMITS: after the
 * limit one line says how much was dropped, so a log never grows without bound and never hides
 * that it was cut.
 */
export class JobLogCollector {
  private partial = new Map<string, string>();
  private pending: NewEvent[] = [];
  private lines = 0;
  private bytes = 0;
  private dropped = 0;

  constructor(private readonly limits = LOG_LIMITS) {}

  /** A chunk of the stream `source` (stdout or stderr). */
  write(source: string, chunk: string, now = new Date()): void {
    const text = (this.partial.get(source) ?? '') + chunk;
    const parts = text.split('\n');
    const rest = parts.pop() ?? '';
    // a line without end that is already too long is taken as it is
    if (rest.length > this.limits.lineChars) {
      parts.push(rest);
      this.partial.set(source, '');
    } else this.partial.set(source, rest);
    for (const line of parts) this.add(line, source === 'stderr' ? 'error' : 'info', now);
  }

  private add(raw: string, level: NewEvent['level'], now: Date): void {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    const message = line.length > this.limits.lineChars ? `${line.slice(0, this.limits.lineChars)}… (line cut)` : line;
    const size = Buffer.byteLength(message);
    if (this.lines >= this.limits.lines || this.bytes + size > this.limits.bytes) {
      this.dropped++;
      return;
    }
    this.lines++;
    this.bytes += size;
    // gex's own lines name their level; stderr is not always an error
    const named = /\b(WARN|WARNING)\b/.test(message.slice(0, 40))
      ? 'warning'
      : /\b(ERROR|FATAL)\b/.test(message.slice(0, 40))
        ? 'error'
        : level === 'error'
          ? 'info'
          : level;
    this.pending.push({ created: now.toISOString(), level: named, message });
  }

  /** The lines collected since the last call; with `end`, the unfinished ones and the note on dropped lines too. */
  take(end = false, now = new Date()): NewEvent[] {
    if (end) {
      for (const [source, rest] of this.partial) if (rest) this.add(rest, source === 'stderr' ? 'error' : 'info', now);
      this.partial.clear();
      if (this.dropped > 0) {
        this.pending.push({
          created: now.toISOString(),
          level: 'warning',
          message: `Log cut: ${this.dropped} more lines were not kept (a job keeps at most ${this.limits.lines} lines, ${this.limits.bytes} bytes).`,
        });
        this.dropped = 0;
      }
    }
    const taken = this.pending;
    this.pending = [];
    return taken;
  }
}
