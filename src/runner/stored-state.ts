import { isJsonObject, type JsonObject, type JsonValue } from '../json/index.js';

/**
 * The state a runner stores for a configuration or row (docs/design.md#state-saved-back):
 * `{"component": <what the component wrote>, "storage": {"input": {"tables": [], "files": []}}}`,
 * shallow-merged over what is stored, so other root keys survive.
 */
export function componentState(stored: JsonValue): JsonObject {
  const component = isJsonObject(stored) ? stored.get('component') : undefined;
  return isJsonObject(component) ? component : new Map();
}

export function storedState(current: JsonValue, component: JsonValue): JsonObject {
  const next: JsonObject = isJsonObject(current) ? new Map(current) : new Map();
  next.set('component', component);
  next.set(
    'storage',
    new Map([
      [
        'input',
        new Map<string, JsonValue>([
          ['tables', []],
          ['files', []],
        ]),
      ],
    ]),
  );
  return next;
}

/** A copy with every scalar under a `#` key replaced, for files written to disk. */
export function redactSecrets(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (!isJsonObject(value)) return value;
  const out: JsonObject = new Map();
  for (const [k, v] of value) out.set(k, k.startsWith('#') && !isJsonObject(v) && !Array.isArray(v) && v !== null ? '[hidden]' : redactSecrets(v));
  return out;
}
