import { UserError } from '../../common/errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import { PHP_FUNCTIONS, PhpFunctionError, phpJsonRoundTrip } from '../../php/index.js';

/**
 * Generic Extractor's user functions (keboola/codebuilder): wherever GE accepts them, a value may
 * be a scalar; `{"function": name, "args": [...]}`; a reference `{"<context>": "key"}` (an object
 * with exactly one key naming a context, e.g. `{"attr": "server.port"}`); or a plain object whose
 * members are evaluated. Contexts are flattened with dotted keys; only leaves can be referenced.
 */

/** Context name → flattened values (`{"attr": {"a.b": 1}}`). */
export type FunctionContexts = Record<string, Map<string, JsonValue>>;

export const DEFAULT_FUNCTIONS = [
  'md5',
  'sha1',
  'time',
  'date',
  'strtotime',
  'base64_encode',
  'hash_hmac',
  'hash',
  'sprintf',
  'concat',
  'ifempty',
  'implode',
];

/** Keboola php-utils `flattenArray`: nested objects and lists become dotted keys. */
export function flattenContext(
  value: JsonValue | undefined,
  prefix = '',
  into = new Map<string, JsonValue>(),
): Map<string, JsonValue> {
  const entries: Array<[string, JsonValue]> = isJsonObject(value)
    ? [...value]
    : Array.isArray(value)
      ? value.map((v, i) => [String(i), v])
      : [];
  for (const [key, v] of entries) {
    const name = prefix === '' ? key : `${prefix}.${key}`;
    if ((isJsonObject(v) && v.size > 0) || (Array.isArray(v) && v.length > 0)) flattenContext(v, name, into);
    else into.set(name, v);
  }
  return into;
}

export function userScriptError(message: string): UserError {
  return new UserError('GEX_USER_FUNCTION_FAILED', `User script error: ${message}`);
}

export class UserFunctions {
  constructor(private readonly allowed: readonly string[] = DEFAULT_FUNCTIONS) {}

  /** Also allows `urlencode` (GE allows it in placeholder functions). */
  withUrlencode(): UserFunctions {
    return new UserFunctions([...this.allowed, 'urlencode']);
  }

  /**
   * A value as GE's UserFunction::build makes it: first through PHP's JSON round trip (a float
   * argument like 1e15 reaches a function as the int 1000000000000000), then evaluated.
   */
  evaluate(value: JsonValue, contexts: FunctionContexts): JsonValue {
    return this.run(phpJsonRoundTrip(value), contexts);
  }

  private run(value: JsonValue, contexts: FunctionContexts): JsonValue {
    if (Array.isArray(value)) return value.map((v) => this.run(v, contexts));
    if (!isJsonObject(value)) return value;
    if (value.has('function')) return this.call(value, contexts);
    if (value.size === 1) {
      const [name, key] = [...value][0];
      if (name in contexts) return reference(name, key, contexts[name]);
    }
    const out: JsonObject = new Map();
    for (const [k, v] of value) out.set(k, this.run(v, contexts));
    return out;
  }

  private call(value: JsonObject, contexts: FunctionContexts): JsonValue {
    const name = value.get('function');
    if (typeof name !== 'string' || !this.allowed.includes(name)) {
      throw userScriptError(`Illegal function '${typeof name === 'string' ? name : JSON.stringify(name)}'!`);
    }
    const rawArgs = value.get('args');
    const args = Array.isArray(rawArgs)
      ? rawArgs.map((a) => this.run(a, contexts))
      : isJsonObject(rawArgs)
        ? [...rawArgs.values()].map((a) => this.run(a, contexts))
        : [];
    try {
      return PHP_FUNCTIONS[name](args);
    } catch (error) {
      if (error instanceof PhpFunctionError) throw userScriptError(error.message);
      throw error;
    }
  }
}

function reference(context: string, key: JsonValue, values: Map<string, JsonValue>): JsonValue {
  if (isJsonObject(key) || Array.isArray(key)) {
    throw userScriptError(`Error evaluating user function - ${context} '${JSON.stringify(key)}' is not a string!`);
  }
  const found = values.get(String(key));
  if (found === undefined || found === null)
    throw userScriptError(`Error evaluating user function - ${context} '${String(key)}' not found!`);
  return found;
}

/**
 * Job params as GE evaluates them: only the top level is walked; object values are functions,
 * references or plain objects (lists stay as written). All of them pass PHP's JSON round trip.
 */
export function evaluateParams(params: JsonObject, functions: UserFunctions, contexts: FunctionContexts): JsonObject {
  const out: JsonObject = new Map();
  for (const [k, v] of params) out.set(k, isJsonObject(v) ? functions.evaluate(v, contexts) : phpJsonRoundTrip(v));
  return out;
}
