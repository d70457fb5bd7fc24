import { UserError } from '../../common/errors.js';
import { quoteForLog } from '../../common/log-text.js';
import { decodeJson, isJsonObject, JsonSyntaxError, type JsonObject, type JsonValue } from '../../json/index.js';

/**
 * `--set path=value` on a configuration body. A path is keys joined by `.` with list indexes in
 * brackets (`parameters.config.jobs[0].endpoint`); a key holding `.`, `[` or `]` is written as a
 * JSON string in brackets (`parameters["a.b"]`). The value is JSON when it parses as JSON, else
 * the text itself (`--set parameters.api.baseUrl=https://x/` sets a string) — unless it starts
 * like JSON (`{`, `[`, `"`): then it must be JSON, and a syntax error names its line and column.
 */
export type PathStep = string | number;

/** Keys that mean an object's prototype to JavaScript code that may read the body later. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);
const MAX_PATH_LENGTH = 1000;
const MAX_STEPS = 64;
/** a new list item may be appended (index = length); farther indexes would need padding */
const MAX_INDEX = 100_000;

/** `option`: the command-line option the path came with, named in errors (`--set`, `--set-secret`…). */
export function parsePath(path: string, option = '--set'): PathStep[] {
  // typed so that control flow knows it never returns
  const refuse: (problem: string) => never = (problem) => {
    throw new UserError('GEX_CLI_USAGE', `${option} path ${quoteForLog(path.slice(0, 200))} ${problem}`);
  };
  if (path === '') refuse('is empty: name a key, e.g. parameters.api.baseUrl');
  if (path.length > MAX_PATH_LENGTH) refuse(`is longer than ${MAX_PATH_LENGTH} characters`);
  const steps: PathStep[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === '[') {
      const end = path.indexOf(']', i);
      if (end < 0) refuse(`has a "[" without its "]" at character ${i + 1}`);
      const inner = path.slice(i + 1, end);
      if (/^\d+$/.test(inner)) {
        const index = Number(inner);
        if (index > MAX_INDEX) refuse(`has the list index ${inner}, above ${MAX_INDEX}`);
        steps.push(index);
        i = end + 1;
      } else if (inner.startsWith('"')) {
        // a quoted key ends at the first `"]` that closes a valid JSON string
        const close = path.indexOf('"]', i + 2);
        let key: unknown;
        try {
          key = close < 0 ? undefined : decodeJson(path.slice(i + 1, close + 1));
        } catch {
          key = undefined;
        }
        if (typeof key !== 'string')
          refuse(`has a bracketed key at character ${i + 1} that is not a JSON string, e.g. ["a.b"]`);
        steps.push(key);
        i = close + 2;
      } else
        refuse(
          `has [${quoteForLog(inner).slice(1, -1)}] at character ${i + 1}: brackets hold a list index ([0]) or a JSON string (["a.b"])`,
        );
    } else {
      if (steps.length > 0) {
        if (path[i] !== '.') refuse(`needs a "." or "[" at character ${i + 1}`);
        i++;
      }
      if (path[i] === '[' && steps.length > 0) refuse(`has an empty key before character ${i + 1}`);
      const match = /^[^.[\]]+/.exec(path.slice(i));
      if (!match) refuse(`has an empty key at character ${i + 1}`);
      steps.push(match[0]);
      i += match[0].length;
    }
    if (steps.length > MAX_STEPS) refuse(`is deeper than ${MAX_STEPS} steps`);
  }
  for (const step of steps) {
    if (typeof step === 'string' && FORBIDDEN_KEYS.has(step))
      refuse(`uses the key "${step}", which is refused: it names an object's prototype in JavaScript`);
  }
  return steps;
}

/** The path written back in the syntax parsePath reads (for change descriptions). */
export function formatPath(steps: readonly PathStep[]): string {
  return steps
    .map((s, i) =>
      typeof s === 'number'
        ? `[${s}]`
        : /^[^.[\]\p{Cc}\p{Cf}\p{Zl}\p{Zp}"]+$/u.test(s)
          ? `${i ? '.' : ''}${s}`
          : `[${quoteForLog(s)}]`,
    )
    .join('');
}

/** `path=value` split at the first `=`, the value decoded as JSON when it is JSON. */
export function parseAssignment(assignment: string): { path: PathStep[]; value: JsonValue } {
  const eq = assignment.indexOf('=');
  if (eq < 0)
    throw new UserError(
      'GEX_CLI_USAGE',
      `--set takes path=value, e.g. parameters.api.baseUrl=https://api.example.com/ (got no "=")`,
    );
  const text = assignment.slice(eq + 1);
  const path = parsePath(assignment.slice(0, eq));
  let value: JsonValue;
  try {
    value = decodeJson(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    // an object, a list or a quoted string was meant as JSON: broken JSON is not stored as text
    if (/^\s*[{["]/.test(text))
      throw new UserError(
        'GEX_CLI_USAGE',
        `--set ${formatPath(path)}: the value is not valid JSON: ${error.message}. ` +
          'A value starting with {, [ or " must be JSON; for that text itself, write it as a JSON string or use --set-file.',
      );
    value = text;
  }
  return { path, value };
}

function describeKind(v: JsonValue | undefined): string {
  if (Array.isArray(v)) return 'a list';
  if (isJsonObject(v)) return 'an object';
  return v === null ? 'null' : `a ${typeof v === 'object' ? 'number' : typeof v}`;
}

/** `root` with `value` at `path` (a new tree; `root` is not changed); missing objects are created on the way. */
export function setAt(root: JsonValue, path: readonly PathStep[], value: JsonValue, option = '--set'): JsonValue {
  return setBelow(root, path, value, [], option);
}

function setBelow(
  root: JsonValue,
  path: readonly PathStep[],
  value: JsonValue,
  done: PathStep[],
  option: string,
): JsonValue {
  if (path.length === 0) return value;
  const [step, ...rest] = path;
  const here = [...done, step];
  // what a missing step becomes: a list when the next step is an index
  const fresh = (): JsonValue => (typeof rest[0] === 'number' ? [] : new Map());
  if (typeof step === 'number') {
    if (!Array.isArray(root))
      throw new UserError(
        'GEX_CLI_USAGE',
        `${option} ${formatPath(here)}: ${formatPath(done) || 'the body'} is ${describeKind(root)}, not a list`,
      );
    if (step > root.length)
      throw new UserError(
        'GEX_CLI_USAGE',
        `${option} ${formatPath(here)}: the list has ${root.length} items; an index may be at most ${root.length} (to append)`,
      );
    const copy = [...root];
    copy[step] = setBelow(root[step] ?? fresh(), rest, value, here, option);
    return copy;
  }
  if (!isJsonObject(root))
    throw new UserError(
      'GEX_CLI_USAGE',
      `${option} ${formatPath(here)}: ${formatPath(done) || 'the body'} is ${describeKind(root)}, not an object`,
    );
  const copy: JsonObject = new Map(root);
  copy.set(step, setBelow(root.get(step) ?? fresh(), rest, value, here, option));
  return copy;
}
