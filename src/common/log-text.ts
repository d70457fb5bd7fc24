/**
 * Ids and names from configurations and stores are opaque text: shown raw in a log line, a newline
 * or a carriage return in one could print a line of its own that looks like gex's (a forged
 * "Saved state" or a hidden error), and a space makes "row 1: <id> <name>" ambiguous. These
 * helpers render such text so that one value is always one visible, unambiguous token.
 */

/** Characters that end or rewrite a line, or reorder or hide text on a terminal. */
const INVISIBLE_OR_LINE_BREAKING = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** Printable ASCII without space, quote or backslash: shown as it is. */
const PLAIN_ID = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * `text` as a JSON string literal, with every control, format (bidi overrides, zero-width) and
 * line or paragraph separator character escaped as `\uXXXX` — JSON.stringify leaves the last
 * three kinds as they are.
 */
export function quoteForLog(text: string): string {
  return JSON.stringify(text).replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => {
    let escaped = '';
    // astral characters (tag characters are format characters) escape as their surrogate pair
    for (let i = 0; i < c.length; i++) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return escaped;
  });
}

/** An id for a log line or message: as it is when plain (`a-users`, `123`), else JSON-quoted. */
export function displayId(id: string): string {
  return PLAIN_ID.test(id) ? id : quoteForLog(id);
}

/**
 * An option with its value as a person would type it (a hint in a message): `--row-id users`, or
 * `--row-id=-x` when the value starts with `-` — given apart, it would be read as an option.
 */
export function displayOption(option: string, value: string): string {
  return value.startsWith('-') ? `${option}=${displayId(value)}` : `${option} ${displayId(value)}`;
}

/** A name or other free text for a log line: as it is unless it could break or hide part of the line. */
export function displayText(text: string): string {
  return INVISIBLE_OR_LINE_BREAKING.test(text) ? quoteForLog(text) : text;
}

/**
 * The most characters of a value a message repeats: enough to recognise it, never all of a huge
 * one (a 500,000-character id sent to a server is refused in a few hundred bytes).
 */
export const EXCERPT_CHARACTERS = 100;

/** `text` cut to `max` characters (a surrogate pair is never split); whether it was cut. */
function head(text: string, max: number): { head: string; cut: boolean } {
  if (text.length <= max) return { head: text, cut: false };
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
  return { head: text.slice(0, end), cut: true };
}

/** `text` as it is, or its first `max` characters and `…` (a whole message that must stay bounded). */
export function excerpt(text: string, max: number): string {
  const shown = head(text, max);
  return shown.cut ? `${shown.head}…` : text;
}

/**
 * An id or value someone sent, for a message that repeats it: displayId of its first
 * EXCERPT_CHARACTERS characters, with `…` after it when it was longer. The one way a message
 * quotes a value it did not choose.
 */
export function excerptId(value: string, max = EXCERPT_CHARACTERS): string {
  const shown = head(value, max);
  return `${displayId(shown.head)}${shown.cut ? '…' : ''}`;
}

/** A name or other free text someone sent, for a message: as displayText, cut as excerptId. */
export function excerptText(text: string, max = EXCERPT_CHARACTERS): string {
  const shown = head(text, max);
  return `${displayText(shown.head)}${shown.cut ? '…' : ''}`;
}

/** A value someone sent, always quoted (quoteForLog), cut as excerptId. */
export function excerptQuoted(value: string, max = EXCERPT_CHARACTERS): string {
  const shown = head(value, max);
  return `${quoteForLog(shown.head)}${shown.cut ? '…' : ''}`;
}

/** At most `max` values of a list for a message, each by `show`, then how many more there are. */
export function excerptList(values: readonly string[], show: (value: string) => string = excerptId, max = 10): string {
  const shown = values
    .slice(0, max)
    .map((value) => show(value))
    .join(', ');
  return values.length > max ? `${shown} and ${values.length - max} more` : shown;
}
