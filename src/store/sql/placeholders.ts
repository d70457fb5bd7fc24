/**
 * Rewrites the store's `?` placeholders as PostgreSQL's `$1, $2, …`. A `?` inside a string
 * literal, a quoted identifier or a comment is left alone (none of the store's statements has
 * one, but a translation must not depend on that).
 */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (ch === "'" || ch === '"') {
      const end = closingQuote(sql, i, ch);
      out += sql.slice(i, end + 1);
      i = end;
    } else if (ch === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end === -1 ? sql.length - 1 : end;
      out += sql.slice(i, stop + 1);
      i = stop;
    } else if (ch === '?') out += `$${++n}`;
    else out += ch;
  }
  return out;
}

/** Index of the quote closing the one at `start` (a doubled quote is an escaped one). */
function closingQuote(sql: string, start: number, quote: string): number {
  for (let i = start + 1; i < sql.length; i++) {
    if (sql[i] !== quote) continue;
    if (sql[i + 1] === quote) i++;
    else return i;
  }
  return sql.length - 1;
}
