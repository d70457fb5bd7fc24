import { displayText } from '../../../common/log-text.js';
import { isJsonObject, isScalar, type JsonObject, type JsonValue } from '../../../json/index.js';
import { StructureError } from '../json-parser/structure.js';
import type { Definitions, LegacyStruct } from './legacy-struct.js';

type ValueType = 'scalar' | 'object' | 'array' | 'NULL';

/** `Analyzer::getType` in non-strict mode. */
export function legacyType(v: JsonValue | undefined): ValueType {
  if (isScalar(v)) return 'scalar';
  if (isJsonObject(v)) return 'object';
  if (Array.isArray(v)) return 'array';
  return 'NULL';
}

/**
 * php-utils `isEmptyObject` as GE uses it: an object with no properties, or whose **first**
 * property is itself an empty object (the rest is not looked at).
 */
export function isEmptyObject(o: JsonObject): boolean {
  const first = o.values().next();
  if (first.done) return true;
  return isJsonObject(first.value) ? isEmptyObject(first.value) : false;
}

/**
 * The legacy parser's analysis (keboola-legacy/json-parser `Analyzer` with nested arrays as JSON
 * and no row limit): every row's property types are merged into the flat structure; objects
 * recurse under `type.key`, lists are analysed as `type.key` and recorded as `arrayOf<item>`,
 * empty objects are skipped.
 */
export class LegacyAnalyzer {
  constructor(
    private readonly struct: LegacyStruct,
    private readonly onWarning: (message: string) => void = () => {},
  ) {}

  /** `Analyzer::analyze`: the item type of the list, or false for an empty list. */
  analyze(data: JsonValue[], type: string): string | false {
    if (data.length === 0) return false;
    let rowType = this.struct.arrayType(type);
    for (const row of data) {
      const newType = this.analyzeRow(row, type);
      if (rowType !== null && newType !== rowType && newType !== 'NULL' && rowType !== 'NULL') {
        throw new StructureError(
          `Data array in '${type}' contains incompatible data types '${rowType}' and '${newType}'!`,
        );
      }
      rowType = newType;
    }
    return rowType!;
  }

  private analyzeRow(row: JsonValue, type: string): string {
    const definitions: Definitions = new Map();
    let rowType: string = legacyType(row);
    if (isScalar(row)) definitions.set('data', 'scalar');
    else if (isJsonObject(row)) {
      for (const [key, field] of row) {
        let fieldType: string = legacyType(field);
        if (fieldType === 'object') {
          if (isEmptyObject(field as JsonObject)) continue;
          this.analyzeRow(field, `${type}.${key}`);
        } else if (fieldType === 'array') {
          const itemType = this.analyze(field as JsonValue[], `${type}.${key}`);
          fieldType = itemType === false ? 'NULL' : `arrayOf${itemType}`;
        }
        definitions.set(key, fieldType);
      }
    } else if (Array.isArray(row)) {
      // a list inside a list is written as JSON text, with GE's warning for each
      this.onWarning(`Unsupported array nesting in '${displayText(type)}'! Converting to JSON string.`);
      rowType = 'scalar';
      definitions.set('data', 'scalar');
    }
    this.struct.add(type, definitions);
    return rowType;
  }
}
