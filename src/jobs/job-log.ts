import type { JobEvent } from './job-record.js';

type NewEvent = Pick<JobEvent, 'created' | 'level' | 'message'>;

/** Bounds of one job's kept log: lines and bytes in all, and characters of one line. */
export const LOG_LIMITS = { lines: 5000, bytes: 2 * 1024 * 1024, lineChars: 8192 };
/** a line of output read whole (a JSON log line carries its message and fields): longer ones are cut */
const RAW_LINE_FACTOR = 32;

/** Keboola's event types from gex's log levels. */
const EVENT_LEVELS: Record<string, NewEvent['level']> = {
  trace: 'info',
  debug: 'info',
  info: 'info',
  warn: 'warning',
  error: 'error',
  fatal: 'error',
};

/**
 * A line of a job's `gex run` (JSON lines, see job-run-contract.ts) as an event: its message,
 * level and time once — the stored event carries them, so the message does not repeat them.
 * Anything else (node's own warnings, a crash's report) is kept as it came: an info line, or the
 * level it names at its start.
 */
function eventOf(line: string, now: Date): NewEvent {
  if (line.startsWith('{')) {
    try {
      const record = JSON.parse(line) as Record<string, unknown>;
      const level = typeof record.level === 'string' ? EVENT_LEVELS[record.level] : undefined;
      if (level && typeof record.msg === 'string') {
        const time = typeof record.time === 'string' ? new Date(record.time) : undefined;
        const created = time && !Number.isNaN(time.getTime()) ? time.toISOString() : now.toISOString();
        return { created, level, message: record.msg };
      }
    } catch {
      // not a log record: kept as text
    }
  }
  const head = line.slice(0, 40);
  const level = /\b(WARN|WARNING)\b/.test(head) ? 'warning' : /\b(ERROR|FATAL)\b/.test(head) ? 'error' : 'info';
  return { created: now.toISOString(), level, message: line };
}

/**
 * Splits a child's output into lines and hands them on in batches as events, within LOG_LIMITS:
 * after the limit one line says how much was dropped, so a log never grows without bound and never
 * hides that it was cut.
 */
export class JobLogCollector {
  private partial = new Map<string, string>();
  private pending: NewEvent[] = [];
  private lines = 0;
  private bytes = 0;
  private dropped = 0;

  constructor(private readonly limits = LOG_LIMITS) {}

  private get rawLineChars(): number {
    return this.limits.lineChars * RAW_LINE_FACTOR;
  }

  /** A chunk of the stream `source` (stdout or stderr). */
  write(source: string, chunk: string, now = new Date()): void {
    const text = (this.partial.get(source) ?? '') + chunk;
    const parts = text.split('\n');
    const rest = parts.pop() ?? '';
    // a line without end that is already too long is taken as it is
    if (rest.length > this.rawLineChars) {
      parts.push(rest);
      this.partial.set(source, '');
    } else this.partial.set(source, rest);
    for (const line of parts) this.add(line, now);
  }

  private add(raw: string, now: Date): void {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    const event = eventOf(line.length > this.rawLineChars ? line.slice(0, this.rawLineChars) : line, now);
    const text = event.message;
    if (text.trim() === '') return;
    const message = text.length > this.limits.lineChars ? `${text.slice(0, this.limits.lineChars)}… (line cut)` : text;
    const size = Buffer.byteLength(message);
    if (this.lines >= this.limits.lines || this.bytes + size > this.limits.bytes) {
      this.dropped++;
      return;
    }
    this.lines++;
    this.bytes += size;
    this.pending.push({ ...event, message });
  }

  /** The lines collected since the last call; with `end`, the unfinished ones and the note on dropped lines too. */
  take(end = false, now = new Date()): NewEvent[] {
    if (end) {
      for (const rest of this.partial.values()) if (rest) this.add(rest, now);
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
