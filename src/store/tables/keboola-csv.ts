import { stringify } from 'csv-stringify/sync';

/** Keboola's CSV: a header, every value quoted (empty ones too), `""` inside, LF line ends. */
const KEBOOLA_CSV = { quoted: true, quoted_empty: true, record_delimiter: 'unix' } as const;

/** Rows as Keboola's CSV text (what table exports write, to a file or to File Storage). */
export function keboolaCsv(rows: readonly (readonly string[])[]): string {
  return rows.length === 0 ? '' : stringify(rows as string[][], KEBOOLA_CSV);
}
