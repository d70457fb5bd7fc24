import { fromPlain, type JsonValue } from '../json/index.js';
import type { TablePreview } from '../store/tables/index.js';

/** Longest value a JSON preview carries whole; longer ones are cut and flagged `isTruncated` (Keboola's 16k). */
export const JSON_PREVIEW_VALUE_CHARACTERS = 16_384;

const quoted = (value: string): string => `"${value.replaceAll('"', '""')}"`;

/** Keboola's `rfc` preview: a header row, every value enclosed in `"` (doubled inside), lines ending in `\n`. */
export function previewCsv(preview: TablePreview): string {
  const lines = [preview.columns.map(quoted).join(',')];
  for (const row of preview.rows) lines.push(row.map(quoted).join(','));
  return `${lines.join('\n')}\n`;
}

/** Keboola's `format=json` preview: `{columns, rows: [[{columnName, value, isTruncated}]]}`. */
export function previewJson(preview: TablePreview): JsonValue {
  return fromPlain({
    columns: preview.columns,
    rows: preview.rows.map((row) =>
      row.map((value, i) => {
        const isTruncated = value.length > JSON_PREVIEW_VALUE_CHARACTERS;
        return { columnName: preview.columns[i], value: isTruncated ? value.slice(0, JSON_PREVIEW_VALUE_CHARACTERS) : value, isTruncated };
      }),
    ),
  });
}
