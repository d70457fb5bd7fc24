import { UserError } from '../../common/errors.js';
import { isJsonObject, isScalar, type JsonValue } from '../../json/index.js';
import { phpEmpty, phpJsonEncode, phpToString } from '../../php/index.js';

/**
 * `responseFilter`: the value at each path of every record is frozen into JSON text (so it lands
 * in one cell instead of being flattened). `a[]` means "each element of list a". With
 * compatLevel ≤ 2 scalars are stringified instead of JSON-encoded and PHP-empty values are left.
 * Returns filtered copies; the response itself stays untouched (it is compared with the next page).
 */
export function applyResponseFilter(
  records: JsonValue[],
  filters: string[],
  delimiter: string,
  compatLevel: number,
): JsonValue[] {
  if (filters.length === 0) return records;
  return records.map((record) =>
    filters.reduce((item, filter) => filterItem(item, filter, delimiter, compatLevel), record),
  );
}

function filterItem(item: JsonValue, filter: string, delimiter: string, compat: number): JsonValue {
  const at = filter.indexOf(delimiter);
  let current = at >= 0 ? filter.slice(0, at) : filter;
  const rest = at >= 0 ? filter.slice(at + delimiter.length) : '';
  const each = current.endsWith('[]');
  if (each) current = current.slice(0, -2);
  if (!isJsonObject(item) || !item.has(current)) return item;
  const value = item.get(current)!;
  if (compat <= 2 && phpEmpty(value, false)) return item;
  if (each && !Array.isArray(value)) {
    throw new UserError(
      'GEX_API_RESPONSE_INVALID',
      `Error filtering response: '${current}' is not an array (responseFilter '${filter}').`,
    );
  }
  const apply = (v: JsonValue): JsonValue => (rest === '' ? freeze(v, compat) : filterItem(v, rest, delimiter, compat));
  const copy = new Map(item);
  copy.set(current, each ? (value as JsonValue[]).map(apply) : apply(value));
  return copy;
}

function freeze(value: JsonValue, compat: number): JsonValue {
  if (compat <= 2 && isScalar(value)) return phpToString(value);
  return phpJsonEncode(value, { floatPrecision: 17 });
}
