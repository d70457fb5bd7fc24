/** A terminal stream as the progress line needs it: whether it is one, and its width when known. */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

export interface ProgressLineOptions {
  /** draw at all (default: when the stream is a terminal) */
  enabled?: boolean;
  /** the shortest time between two draws, so a fast run does not spend its time drawing */
  minIntervalMs?: number;
  /** the clock in milliseconds (tests pin it) */
  now?: () => number;
}

/**
 * A single live status line on a terminal ("[0:03] users: 120 pages, 12,000 records, 4,100 records/s").
 * Each draw returns to the start of the line and clears it (`\r`, `ESC[K`), so updates overwrite
 * each other; log lines clear it first, so it never mixes with them; off when the stream is not a
 * TTY. A line wider than the terminal would wrap, and `\r` would then rewrite only its last part:
 * it is cut to the terminal's width.
 */
export class ProgressLine {
  readonly enabled: boolean;
  private readonly minIntervalMs: number;
  private readonly now: () => number;
  private shown = false;
  private lastDraw: number | undefined;

  constructor(
    private readonly stream: ProgressStream,
    options: ProgressLineOptions = {},
  ) {
    this.enabled = options.enabled ?? Boolean(stream.isTTY);
    this.minIntervalMs = options.minIntervalMs ?? 100;
    this.now = options.now ?? Date.now;
  }

  /** Draws `text` (plain text, already safe for a terminal) unless the last draw was too recent. */
  update(text: string, force = false): void {
    if (!this.enabled) return;
    const now = this.now();
    if (!force && this.lastDraw !== undefined && now - this.lastDraw < this.minIntervalMs) return;
    this.lastDraw = now;
    this.stream.write(`\r\x1b[K${fitWidth(text, this.stream.columns)}`);
    this.shown = true;
  }

  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}

/** `text` cut to one column less than the terminal (the cursor stays on the line); unknown width: as it is. */
export function fitWidth(text: string, columns: number | undefined): string {
  if (!columns || columns < 2) return text;
  const chars = [...text];
  return chars.length < columns ? text : `${chars.slice(0, columns - 2).join('')}…`;
}
