import { excerptQuoted } from '../../common/log-text.js';
import { isJsonObject, isScalar, type JsonValue } from '../../json/index.js';
import { phpToString } from '../../php/index.js';
import { StoreError } from '../../store/store-error.js';

/**
 * The fields of a form or JSON request body as Keboola's clients send them: `tags[]=a` or
 * `"tags": ["a"]`, booleans as true/false/1/0, numbers as text or JSON numbers. Each refusal is a
 * 400 naming the field, with Keboola's `code` for the resource.
 */
export class BodyFields {
  private readonly fields: Map<string, JsonValue>;

  constructor(
    raw: unknown,
    private readonly code: string,
  ) {
    if (raw !== undefined && raw !== null && !isJsonObject(raw))
      throw this.invalid('body', 'The request body must be a JSON object or a form.');
    this.fields = isJsonObject(raw) ? raw : new Map<string, JsonValue>();
  }

  invalid(field: string, problem: string): StoreError {
    return new StoreError(400, this.code, `Invalid parameters - ${field}: ${problem}`, [
      { key: field, message: problem },
    ]);
  }

  /** A text field (at most `max` characters); undefined when absent or null. */
  text(field: string, max = 10_000): string | undefined {
    const value = this.fields.get(field);
    if (value === undefined || value === null) return undefined;
    if (!isScalar(value)) throw this.invalid(field, 'This value should be of type string.');
    const text = phpToString(value);
    if (text.length > max)
      throw this.invalid(field, `This value is too long; it should have at most ${max} characters.`);
    return text;
  }

  flag(field: string, fallback: boolean): boolean {
    const value = this.text(field, 10)?.trim().toLowerCase();
    if (value === undefined || value === '') return fallback;
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw this.invalid(field, `expected true, false, 1 or 0, got ${excerptQuoted(value)}.`);
  }

  /** A list of texts: an array, or one value (`primaryKey=a,b` is split by the caller); at most `max` items. */
  list(field: string, max = 1000): string[] | undefined {
    const value = this.fields.get(field) ?? this.fields.get(`${field}[]`);
    if (value === undefined || value === null) return undefined;
    const items = Array.isArray(value) ? value : isJsonObject(value) ? [...value.values()] : [value];
    if (items.length > max) throw this.invalid(field, `at most ${max} values, got ${items.length}.`);
    return items.map((item) => {
      if (!isScalar(item)) throw this.invalid(field, 'Each value should be of type string.');
      const text = phpToString(item);
      if (text.length > 10_000) throw this.invalid(field, 'A value is longer than 10000 characters.');
      return text;
    });
  }

  /** A whole number from `min` to `max`; undefined when absent or empty. */
  integer(field: string, min: number, max: number): number | undefined {
    const text = this.text(field, 20)?.trim();
    if (text === undefined || text === '') return undefined;
    if (!/^\d{1,16}$/.test(text) || Number(text) < min || Number(text) > max)
      throw this.invalid(field, `expected a whole number from ${min} to ${max}, got ${excerptQuoted(text)}.`);
    return Number(text);
  }
}

/** A numeric id of a file or job (from a URL or a field): undefined when it cannot be one. */
export function numericId(text: string | undefined): number | undefined {
  return text !== undefined && /^[1-9]\d{0,14}$/.test(text.trim()) ? Number(text.trim()) : undefined;
}
