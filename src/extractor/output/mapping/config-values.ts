import { UserError } from '../../../common/errors.js';
import type { JsonValue } from '../../../json/index.js';
import { asPhpArray, phpArrayKey } from '../../../php/index.js';

/**
 * Reading `mappings` the way PHP reads the decoded configuration: objects and lists are both
 * arrays, a missing key or an offset into a scalar is simply absent.
 */

/** `$value['a']['b']…`, undefined where a step is missing or not an array. */
export function field(v: JsonValue | undefined, ...keys: string[]): JsonValue | undefined {
  let current = v;
  for (const key of keys) {
    const array = asPhpArray(current);
    if (!array) return undefined;
    current = array.get(key);
  }
  return current;
}

/** The PHP array key a destination becomes (`$result[$value] = …`); arrays are a user error. */
export function arrayKey(v: JsonValue | undefined): string {
  const key = phpArrayKey(v);
  if (key === undefined)
    throw new UserError('GEX_CONFIG_INVALID', 'Bad Json to CSV Mapping configuration: a destination must be a string');
  return key;
}
