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
