import { formatFloat } from './float-format.js';
import { JsonFloat, type JsonValue } from '../json/value.js';

/**
 * PHP 7.4 `var_export($value, true)` of a decoded value (JSON objects are `stdClass`), with
 * `serialize_precision` 17 as GE runs once its JSON parser exists. Used where GE puts it into
 * error messages (keboola/csv: "Cannot write data into column: …").
 */
export function phpVarExport(value: JsonValue): string {
  const out: string[] = [];
  exportValue(value, 1, out);
  return out.join('');
}

function exportValue(v: JsonValue, level: number, out: string[]): void {
  if (v === null) out.push('NULL');
  else if (v === true) out.push('true');
  else if (v === false) out.push('false');
  else if (typeof v === 'number' || typeof v === 'bigint') out.push(String(v));
  else if (v instanceof JsonFloat) {
    const text = formatFloat(v.value, 17, 'E');
    out.push(text.includes('.') ? text : `${text}.0`);
  } else if (typeof v === 'string') out.push(exportString(v));
  else if (Array.isArray(v)) {
    if (level > 1) out.push('\n', ' '.repeat(level - 1));
    out.push('array (\n');
    v.forEach((x, i) => {
      out.push(' '.repeat(level + 1), String(i), ' => ');
      exportValue(x, level + 2, out);
      out.push(',\n');
    });
    if (level > 1) out.push(' '.repeat(level - 1));
    out.push(')');
  } else {
    if (level > 1) out.push('\n', ' '.repeat(level - 1));
    out.push('(object) array(\n');
    for (const [k, x] of v) {
      out.push(' '.repeat(level + 2), exportString(k), ' => ');
      exportValue(x, level + 2, out);
      out.push(',\n');
    }
    if (level > 1) out.push(' '.repeat(level - 1));
    out.push(')');
  }
}

function exportString(s: string): string {
  return `'${s.replace(/[\\']/g, (c) => `\\${c}`).replace(/\0/g, `' . "\\0" . '`)}'`;
}
