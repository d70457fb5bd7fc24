import { excerptQuoted } from '../../common/log-text.js';
import { StoreError } from '../../store/store-error.js';
import { MAX_PREVIEW_ROWS, MAX_WHERE_VALUES, parseChangedSince, type TableQuery } from '../../store/tables/index.js';
import { commaList, queryValue, type Query } from '../http/query.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

/**
 * Query parameters of the table routes as Keboola's clients send them: `columns=a,b` or
 * `columns[]=a`, `whereValues[]=x` (repeated), `whereOperator` eq/ne (the Python client says
 * `neq`), booleans as true/false/1/0 (the Python client sends `True`/`False`).
 */

const VALIDATION = KEBOOLA_ERRORS.tablesValidation.code;

function invalid(name: string, problem: string): StoreError {
  return new StoreError(400, VALIDATION, `Invalid parameters - ${name}: ${problem}`, [{ key: name, message: problem }]);
}

const shown = (value: string): string => excerptQuoted(value);

/** Every value of `name` and `name[]`, in order. */
function listParam(query: Query, name: string): string[] {
  const values: string[] = [];
  for (const key of [name, `${name}[]`]) {
    const value = query[key];
    if (value !== undefined) values.push(...(Array.isArray(value) ? value : [value]));
  }
  return values;
}

export function flagParam(query: Query, name: string, fallback: boolean): boolean {
  const value = queryValue(query, name)?.trim().toLowerCase();
  if (value === undefined || value === '') return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw invalid(name, `expected true, false, 1 or 0, got ${shown(value)}.`);
}

export type PreviewFormat = 'rfc' | 'json';

/** The parameters of `…/data-preview`. */
export function previewParams(query: Query, now = new Date()): { query: TableQuery; format: PreviewFormat } {
  const limitText = queryValue(query, 'limit')?.trim();
  let limit = 100;
  if (limitText !== undefined && limitText !== '') {
    if (!/^\d{1,7}$/.test(limitText) || Number(limitText) > MAX_PREVIEW_ROWS) {
      throw invalid(
        'limit',
        `expected a whole number of rows from 0 to ${MAX_PREVIEW_ROWS}, got ${shown(limitText)}. Export the table for more rows.`,
      );
    }
    limit = Number(limitText);
  }
  const columns = listParam(query, 'columns').flatMap(commaList);
  const whereColumn = queryValue(query, 'whereColumn')?.trim() || undefined;
  const whereValues = listParam(query, 'whereValues');
  if (whereValues.length > MAX_WHERE_VALUES)
    throw invalid('whereValues', `at most ${MAX_WHERE_VALUES} values, got ${whereValues.length}.`);
  const operatorText = queryValue(query, 'whereOperator')?.trim().toLowerCase() ?? '';
  let whereOperator: 'eq' | 'ne';
  if (operatorText === '' || operatorText === 'eq') whereOperator = 'eq';
  else if (operatorText === 'ne' || operatorText === 'neq') whereOperator = 'ne';
  else throw invalid('whereOperator', `expected eq or ne, got ${shown(operatorText)}.`);
  const moment = (name: string): Date | undefined => {
    const text = queryValue(query, name);
    if (text === undefined || text.trim() === '') return undefined;
    try {
      return parseChangedSince(text, now, name);
    } catch (error) {
      throw new StoreError(400, VALIDATION, (error as Error).message, [
        { key: name, message: (error as Error).message },
      ]);
    }
  };
  const formatText = queryValue(query, 'format')?.trim().toLowerCase() ?? '';
  if (formatText !== '' && formatText !== 'rfc' && formatText !== 'json')
    throw invalid('format', `expected rfc or json, got ${shown(formatText)}.`);
  return {
    query: {
      columns,
      whereColumn,
      whereValues,
      whereOperator,
      changedSince: moment('changedSince'),
      changedUntil: moment('changedUntil'),
      limit,
    },
    format: formatText === 'json' ? 'json' : 'rfc',
  };
}
