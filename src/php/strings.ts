import { phpStringBytes } from './byte-string.js';

/** PHP `trim()` with its default characters (space, tab, newlines, NUL, vertical tab). */
export function phpTrim(s: string): string {
  return s.replace(/^[ \t\n\r\0\x0B]+|[ \t\n\r\0\x0B]+$/g, '');
}

/** PHP `strcmp`: byte-wise order of the strings' bytes (negative, 0 or positive). */
export function phpStrcmp(a: string, b: string): number {
  return Buffer.compare(phpStringBytes(a), phpStringBytes(b));
}

/** PHP `str_word_count` in the C locale: runs of letters, `'` and `-`, not starting with `'`/`-`. */
export function phpStrWordCount(s: string): number {
  let start = 0;
  let end = s.length;
  if (s[0] === "'" || s[0] === '-') start++;
  if (end > start && s[end - 1] === '-') end--;
  let count = 0;
  let p = start;
  while (p < end) {
    const from = p;
    while (p < end && /[A-Za-z'-]/.test(s[p])) p++;
    if (p > from) count++;
    else p++;
  }
  return count;
}
