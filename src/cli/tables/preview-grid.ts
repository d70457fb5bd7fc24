/**
 * A table preview as aligned text for a terminal. Cell values are data from APIs: a value must not
 * be able to move the cursor, recolour the terminal, break a line or reorder text, nor push the
 * other columns off the screen. So control, format and separator characters are shown escaped
 * (`\n`, `\u001b`) and a long value is cut.
 */

/** Widest cell, in characters (a longer value ends in `…`). */
export const MAX_CELL_WIDTH = 40;

const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `value` with every unsafe character escaped and at most `width` characters long. */
export function cellText(value: string, width = MAX_CELL_WIDTH): string {
  const escaped = value.replace(
    UNSAFE,
    (c) => SHORT_ESCAPES[c] ?? [...c].map((u) => `\\u${u.codePointAt(0)!.toString(16).padStart(4, '0')}`).join(''),
  );
  const chars = [...escaped];
  return chars.length <= width ? escaped : `${chars.slice(0, width - 1).join('')}…`;
}

/** Header, a rule and the rows, columns padded to their widest cell and separated by two spaces. */
export function previewGrid(columns: readonly string[], rows: readonly string[][]): string[] {
  const header = columns.map((c) => cellText(c));
  const body = rows.map((row) => row.map((v) => cellText(v)));
  const widths = header.map((h, i) => Math.max([...h].length, ...body.map((r) => [...(r[i] ?? '')].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i] - [...c].length)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(Math.max(w, 1))).join('  '), ...body.map(line)];
}
