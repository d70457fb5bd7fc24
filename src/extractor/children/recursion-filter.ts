import { UserError } from '../../common/errors.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import { getDataFromPath, phpCompareStrings, phpToString } from '../../php/index.js';

/**
 * `recursionFilter` (keboola/filter): decides per parent item whether child jobs run for it.
 * `|` splits first (left-most), then `&`, so `&` binds tighter: `a&b|c` = `(a&b)|c`. A condition
 * is `path<op>value` with the first of `>= <= == != ~~ !~` found (else `>`/`<`); `~~`/`!~` are
 * LIKE patterns where `%` is any sequence. No trimming, no escaping, no parentheses.
 */
export type Filter = (item: JsonValue) => boolean;

const OPERATORS = ['>=', '<=', '==', '!=', '~~', '!~'];

export function compileRecursionFilter(expression: string): Filter {
  const or = expression.indexOf('|');
  if (or >= 0) {
    const left = compileRecursionFilter(expression.slice(0, or));
    const right = compileRecursionFilter(expression.slice(or + 1));
    return (item) => left(item) || right(item);
  }
  const and = expression.indexOf('&');
  if (and >= 0) {
    const left = compileRecursionFilter(expression.slice(0, and));
    const right = compileRecursionFilter(expression.slice(and + 1));
    return (item) => left(item) && right(item);
  }
  return condition(expression);
}

function findOperator(text: string): string | undefined {
  let best: { op: string; at: number } | undefined;
  for (const op of OPERATORS) {
    const at = text.indexOf(op);
    if (at >= 0 && (!best || at < best.at)) best = { op, at };
  }
  if (best) return best.op;
  const gt = text.indexOf('>');
  const lt = text.indexOf('<');
  if (gt < 0 && lt < 0) return undefined;
  if (gt < 0) return '<';
  if (lt < 0) return '>';
  return gt < lt ? '>' : '<';
}

function condition(text: string): Filter {
  const op = findOperator(text);
  if (!op)
    throw new UserError(
      'GEX_CONFIG_INVALID',
      `Invalid recursionFilter condition "${text}": no operator found (use ==, !=, <, >, <=, >=, ~~ or !~)`,
    );
  const [column, value = ''] = text.split(op);
  const compare = comparator(op, value);
  return (item) => {
    const subject = isJsonObject(item) ? item : new Map([['data', item]]);
    return compare(phpToString(getDataFromPath(subject, column) ?? null));
  };
}

function like(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('%')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );
}

function comparator(op: string, value: string): (actual: string) => boolean {
  switch (op) {
    case '==':
      return (a) => a === value;
    case '!=':
      return (a) => a !== value;
    case '>=':
      return (a) => phpCompareStrings(a, value) >= 0;
    case '<=':
      return (a) => phpCompareStrings(a, value) <= 0;
    case '>':
      return (a) => phpCompareStrings(a, value) > 0;
    case '<':
      return (a) => phpCompareStrings(a, value) < 0;
    case '~~': {
      const re = like(value);
      return (a) => re.test(a);
    }
    default: {
      const re = like(value);
      return (a) => !re.test(a);
    }
  }
}
