import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { stringify } from 'csv-stringify/sync';
import { formatFloat, PhpFloat, type JsonValue } from '../../php-compat/index.js';

/** GE's CSV dialect: every field quoted (header and empty cells too), `""` escaping, LF endings. */
const DIALECT = { quoted: true, quoted_empty: true, record_delimiter: 'unix', eof: true } as const;

/** A cell as PHP prints the scalar: `true` → "1", `false`/null → "", floats with 14 digits. */
export function cellText(v: JsonValue | undefined): string {
  if (v === null || v === undefined || v === false) return '';
  if (v === true) return '1';
  if (typeof v === 'string') return v;
  if (v instanceof PhpFloat) return formatFloat(v.value, 14, 'E');
  return String(v);
}

/**
 * One output CSV. Rows are buffered and handed to csv-stringify in chunks; `flush()` waits for the
 * file stream to drain so memory stays bounded however many rows pass through.
 */
export class CsvFile {
  private readonly stream: WriteStream;
  private pending: string[][] = [];
  rows = 0;

  constructor(readonly file: string) {
    this.stream = createWriteStream(file);
  }

  /** The header row; an empty header writes nothing (GE: a table without columns has no header). */
  writeHeader(columns: string[]): void {
    if (columns.length > 0) this.pending.push(columns);
  }

  writeRow(cells: string[]): void {
    this.pending.push(cells);
    this.rows++;
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = stringify(this.pending, DIALECT);
    this.pending = [];
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    await this.flush();
    this.stream.end();
    await once(this.stream, 'finish');
  }

  destroy(): void {
    this.stream.destroy();
  }
}
