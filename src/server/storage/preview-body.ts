import type { PreviewFormat } from './table-params.js';

/** Longest value a JSON preview carries whole; longer ones are cut and flagged `isTruncated` (Keboola's 16k). */
export const JSON_PREVIEW_VALUE_CHARACTERS = 16_384;

/**
 * A data-preview answer written piece by piece, so that no request ever holds its whole answer as
 * one string or as a tree of objects: `rows` encodes one batch as it is read; `start` (once the
 * columns are known) and `end` frame them. The concatenation of the pieces is the answer.
 */
export interface PreviewEncoder {
  readonly contentType: string;
  start(columns: readonly string[]): string;
  rows(rows: readonly string[][]): string;
  end(): string;
}

const quoted = (value: string): string => `"${value.replaceAll('"', '""')}"`;

/** Keboola's `rfc` preview: a header row, every value enclosed in `"` (doubled inside), lines ending in `\n`. */
class CsvPreviewEncoder implements PreviewEncoder {
  readonly contentType = 'text/csv; charset=utf-8';

  start(columns: readonly string[]): string {
    return `${columns.map(quoted).join(',')}\n`;
  }

  rows(rows: readonly string[][]): string {
    let out = '';
    for (const row of rows) out += `${row.map(quoted).join(',')}\n`;
    return out;
  }

  end(): string {
    return '';
  }
}

/**
 * Keboola's `format=json` preview: `{"columns":[…],"rows":[[{"columnName","value","isTruncated"}…]…]}`,
 * byte for byte what gex's exact JSON encoder writes for that tree.
 */
class JsonPreviewEncoder implements PreviewEncoder {
  readonly contentType = 'application/json';
  /** `{"columnName":<name>,"value":` of each column, encoded once */
  private cellStarts: string[] = [];
  private first = true;

  start(columns: readonly string[]): string {
    this.cellStarts = columns.map((c) => `{"columnName":${JSON.stringify(c)},"value":`);
    return `{"columns":${JSON.stringify(columns)},"rows":[`;
  }

  rows(rows: readonly string[][]): string {
    let out = '';
    for (const row of rows) {
      out += this.first ? '[' : ',[';
      this.first = false;
      for (let i = 0; i < row.length; i++) {
        const value = row[i];
        const isTruncated = value.length > JSON_PREVIEW_VALUE_CHARACTERS;
        const shown = isTruncated ? value.slice(0, JSON_PREVIEW_VALUE_CHARACTERS) : value;
        out += `${i ? ',' : ''}${this.cellStarts[i]}${JSON.stringify(shown)},"isTruncated":${isTruncated}}`;
      }
      out += ']';
    }
    return out;
  }

  end(): string {
    return ']}';
  }
}

export function previewEncoder(format: PreviewFormat): PreviewEncoder {
  return format === 'json' ? new JsonPreviewEncoder() : new CsvPreviewEncoder();
}
