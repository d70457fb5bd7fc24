import { UserError } from '../../common/errors.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { getDataFromPath, phpEmpty } from '../../php/index.js';
import type { DataFieldSpec } from '../config/job-config.js';

export interface FoundData {
  records: JsonValue[];
  /** set when the response held no records where expected (GE logs a warning) */
  warning?: string;
  /**
   * whether the warning is news: the response holds data, only not at `dataField` (a wrong path,
   * a changed API). An empty list or value at the path, or a response with nothing in it, is an
   * API saying "no records" (an incremental run with nothing new, a last page): not news.
   */
  news?: boolean;
}

/**
 * Finds the records of a response (GE `FindResponseArray`): the value at `dataField` (a list as
 * is, anything else wrapped in a list), or — without `dataField` — the response itself when it is
 * a list, else its only top-level list property.
 */
export function findRecords(response: JsonValue, dataField: DataFieldSpec | null): FoundData {
  if (dataField) {
    const value = getDataFromPath(response, dataField.path, dataField.delimiter);
    if (value === undefined || phpEmpty(value, false)) {
      const news = value === undefined && holdsData(response);
      return { records: [], warning: `dataField '${dataField.path}' contains no data!`, news };
    }
    return { records: Array.isArray(value) ? value : [value] };
  }
  if (Array.isArray(response)) return { records: response };
  if (isJsonObject(response)) {
    const lists = [...response.entries()].filter(([, v]) => Array.isArray(v));
    if (lists.length === 0) return { records: [], warning: 'No data array found in response!', news: true };
    if (lists.length > 1) {
      const names = lists.map(([k]) => `'${k}'`).join(', ');
      throw new UserError(
        'GEX_API_RESPONSE_INVALID',
        `More than one array found in response (${names})! Use 'dataField' to choose the one holding the records.`,
      );
    }
    return { records: lists[0][1] as JsonValue[] };
  }
  throw new UserError(
    'GEX_API_RESPONSE_INVALID',
    `Unknown response from API: expected a JSON object or list, got ${response === null ? 'null' : typeof response}.`,
  );
}

/** Whether a response has any value that is not empty (PHP's empty()) at its top. */
function holdsData(response: JsonValue): boolean {
  if (Array.isArray(response)) return response.length > 0;
  if (isJsonObject(response)) {
    for (const value of response.values()) if (!phpEmpty(value, true)) return true;
    return false;
  }
  return !phpEmpty(response);
}
