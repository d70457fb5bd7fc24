import { UserError } from '../../../common/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../json/index.js';
import { phpEmpty, phpJsonEncode, phpLooseEqualsString, toPhpArrayMap } from '../../../php/index.js';
import { StructureError } from '../json-parser/structure.js';

/** property → type (`scalar`, `object`, `NULL`, `arrayOf<item type>`), in first-seen order */
export type Definitions = Map<string, string>;

const SCALAR_TYPES = ['integer', 'double', 'string', 'boolean', 'NULL'];
const VALID_TYPES = new Set([...SCALAR_TYPES, 'scalar', 'object', 'array']);

/** `Struct::isArrayOf`: the item type of `arrayOf<type>`, or false. */
export function arrayItemType(type: string): string | false {
  return type.startsWith('arrayOf') ? type.slice(7) : false;
}

/**
 * The legacy parser's structure (keboola-legacy/json-parser `Struct`): a flat map from type path
 * (`users`, `users.address`, `users.tags`) to the types of its properties, merged row by row with
 * the upgrade rules of auto-upgrade-to-array (scalar/object → array, `arrayOfNULL` filled in).
 */
export class LegacyStruct {
  private readonly struct = new Map<string, Definitions>();

  /** Seeds from a saved `json_parser.struct` (version 2). */
  load(value: JsonValue): void {
    if (!isJsonObject(value) && !Array.isArray(value)) return;
    for (const [key, defs] of toPhpArrayMap(value)) {
      if (!isJsonObject(defs) && !Array.isArray(defs)) {
        throw new UserError(
          'GEX_STATE_INVALID',
          `Invalid parser structure in state: Invalid data definitions in '${key}'. Each key should contain an array of data types in an associative array.`,
        );
      }
      const definitions: Definitions = new Map();
      for (const [node, type] of toPhpArrayMap(defs)) {
        const item = typeof type === 'string' ? arrayItemType(type) : false;
        if (typeof type !== 'string' || (!VALID_TYPES.has(type) && !(item !== false && VALID_TYPES.has(item)))) {
          const shown = typeof type === 'string' ? type : phpJsonEncode(type);
          throw new UserError(
            'GEX_STATE_INVALID',
            `Invalid parser structure in state: Error loading data structure definition in '${key}.${node}'! '${shown}' is not a valid data type.`,
          );
        }
        definitions.set(node, type);
      }
      this.struct.set(key, definitions);
    }
  }

  /** `Struct::add`: records the structure of one row of `type`. */
  add(type: string, row: Definitions): void {
    const known = this.struct.get(type);
    if (!known || known.size === 0) {
      this.struct.set(type, new Map(row));
      return;
    }
    // array_diff_assoc: entries of the row whose key is new or whose type differs
    for (const [key, newType] of row) {
      const oldType = known.get(key);
      if (oldType === newType) continue;
      known.set(
        key,
        this.update(oldType === undefined || phpEmpty(oldType) ? null : oldType, newType, `${type}.${key}`),
      );
    }
  }

  /** `Struct::update`: the merged type of a property seen with two different types. */
  private update(oldType: string | null, newType: string, path: string): string {
    if (oldType === null || oldType === 'NULL') return newType;
    if (newType === 'NULL' || newType === oldType) return oldType;
    const oldItem = arrayItemType(oldType);
    const newItem = arrayItemType(newType);
    const upgradable =
      phpLooseEqualsString(oldItem, newType) ||
      newType === `arrayOf${oldType}` ||
      phpLooseEqualsString(oldItem, 'NULL') ||
      phpLooseEqualsString(newItem, 'NULL');
    if (!upgradable) {
      throw new StructureError(
        `Unhandled type change from ${phpJsonEncode(oldType)} to ${phpJsonEncode(newType)} in '${path}'`,
      );
    }
    if (oldItem !== false && !phpEmpty(oldItem)) {
      if (oldItem === 'NULL') return newItem !== false && !phpEmpty(newItem) ? newType : `arrayOf${newType}`;
      return oldType;
    }
    return oldType === 'array' ? `arrayOf${newType}` : `arrayOf${oldType}`;
  }

  hasDefinitions(type: string): boolean {
    return (this.struct.get(type)?.size ?? 0) > 0;
  }

  /** `Struct::getDefinitions`; a type without definitions is an error in GE too. */
  definitions(type: string): Definitions {
    const definitions = this.struct.get(type);
    if (!definitions || definitions.size === 0)
      throw new LegacyStructError(`Trying to retrieve unknown definitions for '${type}'`);
    return definitions;
  }

  /** `Struct::getArrayType`: the known item type of the list at `type`, or null. */
  arrayType(type: string): string | null {
    const separator = type.lastIndexOf('.');
    // PHP's `if (!$separator)`: no dot, or a dot at position 0
    const [parent, child] = separator <= 0 ? [type, 'data'] : [type.slice(0, separator), type.slice(separator + 1)];
    const found = this.struct.get(parent)?.get(child);
    if (found === undefined || phpEmpty(found)) return null;
    return found.replaceAll('arrayOf', '');
  }

  /** The flat map saved as `json_parser.struct`. */
  toState(): JsonObject {
    const out: JsonObject = new Map();
    for (const [type, definitions] of this.struct)
      out.set(type, new Map([...definitions].map(([k, v]) => [k, v as JsonValue])));
    return out;
  }
}

/** A structure inconsistency found while writing (GE fails the run; it is not a user's data error). */
export class LegacyStructError extends Error {}
