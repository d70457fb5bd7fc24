/**
 * A single live status line on a terminal ("users: 120 pages, 12,000 records, 4,100 rec/s").
 * Log lines clear it first, so it never mixes with them; off when the stream is not a TTY.
 */
export class ProgressLine {
  private shown = false;
  private lastDraw = 0;

  constructor(
    private readonly stream: NodeJS.WritableStream & { isTTY?: boolean },
    readonly enabled = Boolean(stream.isTTY),
    private readonly minIntervalMs = 100,
  ) {}

  update(text: string, force = false): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < this.minIntervalMs) return;
    this.lastDraw = now;
    this.stream.write(`\r\x1b[K${text}`);
    this.shown = true;
  }

  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}
