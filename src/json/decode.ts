import { JsonFloat, type JsonObject, type JsonValue } from './value.js';

/**
 * A strict JSON (RFC 8259) decoder that keeps what PHP's `json_decode` keeps and `JSON.parse`
 * loses: object key order for integer-like keys, integer vs float tokens and exact int64 values.
 * No maintained npm package decodes into ordered maps with number tokens intact, hence this one.
 * Nesting is limited to 512 levels like PHP's default depth.
 */
export class JsonSyntaxError extends Error {
  /** where in the text, 1-based, for a person looking for it (the message says it too) */
  readonly line: number;
  readonly column: number;

  constructor(
    problem: string,
    /** the offset (in UTF-16 code units) of the character where decoding failed */
    readonly position: number,
    text: string,
  ) {
    const { line, column } = lineAndColumn(text, position);
    const where = `line ${line}, column ${column}`;
    super(`Syntax error: ${problem} at ${position >= text.length ? `the end of the input (${where})` : where}`);
    this.name = 'JsonSyntaxError';
    this.line = line;
    this.column = column;
  }
}

/** Line and column (1-based) of offset `position` of `text`: what an editor shows. */
export function lineAndColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(0, position), text.length);
  for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: end - lineStart + 1 };
}

/** A `\uXXXX` escape naming half of a UTF-16 surrogate pair without its other half (PHP: JSON_ERROR_UTF16). */
export class JsonUnpairedSurrogateError extends JsonSyntaxError {}

const MAX_DEPTH = 512;
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

export function decodeJson(text: string): JsonValue {
  const parser = new Parser(text);
  parser.skipWhitespace();
  const value = parser.value(0);
  parser.skipWhitespace();
  if (parser.pos !== text.length) parser.fail('unexpected data after the JSON value');
  return value;
}

/** Property names remembered per nesting level, by position in their object (bounded). */
const MAX_HINTED_KEYS = 64;

class Parser {
  pos = 0;
  /**
   * The property names last read at each depth, by position: records of one response repeat
   * their names in the same order, so a name is usually found by comparing it with the text at
   * hand instead of cutting a new string from it (and hashing that again for the Map).
   */
  private readonly keyHints: string[][] = [];
  constructor(private readonly text: string) {}

  fail(what: string, kind: typeof JsonSyntaxError = JsonSyntaxError): never {
    throw new kind(what, this.pos, this.text);
  }

  skipWhitespace(): void {
    const t = this.text;
    let p = this.pos;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  value(depth: number): JsonValue {
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x7b /* { */:
        return this.object(depth + 1);
      case 0x5b /* [ */:
        return this.array(depth + 1);
      case 0x22 /* " */:
        return this.string();
      case 0x74 /* t */:
        return this.literal('true', true);
      case 0x66 /* f */:
        return this.literal('false', false);
      case 0x6e /* n */:
        return this.literal('null', null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
        return this.fail(Number.isNaN(c) ? 'value expected' : `unexpected character '${this.text[this.pos]}'`);
    }
  }

  literal<T extends JsonValue>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail(`unexpected character '${this.text[this.pos]}'`);
    this.pos += word.length;
    return value;
  }

  object(depth: number): JsonObject {
    if (depth > MAX_DEPTH) this.fail('maximum nesting depth exceeded');
    const result: JsonObject = new Map();
    this.pos++;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return result;
    }
    const hints = (this.keyHints[depth] ??= []);
    for (let index = 0; ; index++) {
      if (this.text.charCodeAt(this.pos) !== 0x22) this.fail('property name expected');
      const key = this.key(hints, index);
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail("':' expected");
      this.pos++;
      this.skipWhitespace();
      result.set(key, this.value(depth));
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === 0x2c) {
        this.skipWhitespace();
        continue;
      }
      if (c === 0x7d) return result;
      this.pos--;
      this.fail("',' or '}' expected");
    }
  }

  /**
   * A property name (at its opening quote): the hint for its position when the text holds exactly
   * that name, else read as a string. Only names read without escapes become hints, so a hint that
   * matches the text up to a closing quote is what reading it would give.
   */
  key(hints: string[], index: number): string {
    const t = this.text;
    const start = this.pos;
    const hint = hints[index];
    if (hint !== undefined && t.startsWith(hint, start + 1) && t.charCodeAt(start + 1 + hint.length) === 0x22) {
      this.pos = start + 2 + hint.length;
      return hint;
    }
    const key = this.string();
    // as long as its text: no escape in it
    if (index < MAX_HINTED_KEYS && this.pos - start - 2 === key.length) hints[index] = key;
    return key;
  }

  array(depth: number): JsonValue[] {
    if (depth > MAX_DEPTH) this.fail('maximum nesting depth exceeded');
    const result: JsonValue[] = [];
    this.pos++;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return result;
    }
    for (;;) {
      result.push(this.value(depth));
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === 0x2c) {
        this.skipWhitespace();
        continue;
      }
      if (c === 0x5d) return result;
      this.pos--;
      this.fail("',' or ']' expected");
    }
  }

  string(): string {
    const t = this.text;
    const start = ++this.pos;
    let p = start;
    // fast path: no escapes
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x22) {
        this.pos = p + 1;
        return t.slice(start, p);
      }
      if (c === 0x5c) break;
      if (c < 0x20 || Number.isNaN(c)) {
        this.pos = p;
        this.fail(Number.isNaN(c) ? 'unterminated string' : 'control character in string');
      }
      p++;
    }
    let out = t.slice(start, p);
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x22) {
        this.pos = p + 1;
        return out;
      }
      if (c === 0x5c) {
        const e = t.charCodeAt(p + 1);
        p += 2;
        switch (e) {
          case 0x22:
            out += '"';
            break;
          case 0x5c:
            out += '\\';
            break;
          case 0x2f:
            out += '/';
            break;
          case 0x62:
            out += '\b';
            break;
          case 0x66:
            out += '\f';
            break;
          case 0x6e:
            out += '\n';
            break;
          case 0x72:
            out += '\r';
            break;
          case 0x74:
            out += '\t';
            break;
          case 0x75: {
            const unit = this.hex4(p);
            p += 4;
            if (unit >= 0xd800 && unit <= 0xdbff) {
              // a high surrogate must be followed by an escaped low surrogate (PHP: JSON_ERROR_UTF16)
              const low = t.charCodeAt(p) === 0x5c && t.charCodeAt(p + 1) === 0x75 ? this.hex4(p + 2) : -1;
              if (low < 0xdc00 || low > 0xdfff) {
                this.pos = p;
                this.fail('single unpaired UTF-16 surrogate', JsonUnpairedSurrogateError);
              }
              out += String.fromCharCode(unit, low);
              p += 6;
            } else if (unit >= 0xdc00 && unit <= 0xdfff) {
              this.pos = p;
              this.fail('single unpaired UTF-16 surrogate', JsonUnpairedSurrogateError);
            } else out += String.fromCharCode(unit);
            break;
          }
          default:
            this.pos = p - 1;
            this.fail('invalid escape sequence');
        }
        continue;
      }
      if (c < 0x20 || Number.isNaN(c)) {
        this.pos = p;
        this.fail(Number.isNaN(c) ? 'unterminated string' : 'control character in string');
      }
      // copy the run of plain characters at once
      let q = p + 1;
      for (;;) {
        const d = t.charCodeAt(q);
        if (d === 0x22 || d === 0x5c || d < 0x20 || Number.isNaN(d)) break;
        q++;
      }
      out += t.slice(p, q);
      p = q;
    }
  }

  hex4(p: number): number {
    const s = this.text.slice(p, p + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(s)) {
      this.pos = p;
      this.fail('invalid \\u escape');
    }
    return parseInt(s, 16);
  }

  number(): number | bigint | JsonFloat {
    const t = this.text;
    const start = this.pos;
    let p = start;
    let isFloat = false;
    const negative = t.charCodeAt(p) === 0x2d;
    if (negative) p++;
    const first = t.charCodeAt(p);
    // the integer part's value, exact up to 15 digits: most numbers are such integers, read without a token
    let integer = 0;
    if (first === 0x30) p++;
    else if (first >= 0x31 && first <= 0x39) {
      for (let c = first; isDigit(c); c = t.charCodeAt(++p)) integer = integer * 10 + (c - 0x30);
    } else {
      this.pos = p;
      this.fail('digit expected');
    }
    const integerDigits = p - start - (negative ? 1 : 0);
    if (t.charCodeAt(p) === 0x2e) {
      isFloat = true;
      p++;
      if (!isDigit(t.charCodeAt(p))) {
        this.pos = p;
        this.fail('digit expected after decimal point');
      }
      while (isDigit(t.charCodeAt(p))) p++;
    }
    const e = t.charCodeAt(p);
    if (e === 0x65 || e === 0x45) {
      isFloat = true;
      p++;
      const s = t.charCodeAt(p);
      if (s === 0x2b || s === 0x2d) p++;
      if (!isDigit(t.charCodeAt(p))) {
        this.pos = p;
        this.fail('digit expected in exponent');
      }
      while (isDigit(t.charCodeAt(p))) p++;
    }
    this.pos = p;
    // JSON -0 is PHP int 0
    if (!isFloat && integerDigits <= 15) return negative && integer !== 0 ? -integer : integer;
    const token = t.slice(start, p);
    if (isFloat) return new JsonFloat(Number(token));
    return integerToken(token);
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** An integer token: a PHP int when it fits int64 (else a float, like PHP). */
export function integerToken(token: string): number | bigint | JsonFloat {
  const digits = token.charCodeAt(0) === 0x2d ? token.length - 1 : token.length;
  if (digits <= 15) {
    const n = Number(token);
    return n === 0 ? 0 : n; // JSON -0 is PHP int 0
  }
  const big = BigInt(token);
  if (big > INT64_MAX || big < INT64_MIN) return new JsonFloat(Number(token));
  const n = Number(big);
  return Number.isSafeInteger(n) ? n : big;
}
