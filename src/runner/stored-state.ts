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
  for (const [k, v] of value)
    out.set(
      k,
      k.startsWith('#') && !isJsonObject(v) && !Array.isArray(v) && v !== null ? '[hidden]' : redactSecrets(v),
    );
  return out;
}

/**
 * `out/state.json` of a stored configuration's unit as Generic Extractor writes it for that
 * folder: GE carries its in/state.json over whole, so a `#` value the run got decrypted goes back
 * in the form the folder's in/state.json holds (the stored cipher); any other `#` scalar is hidden.
 * The plaintext never reaches the disk.
 */
export function stateAsInFolder(output: JsonObject, plain: JsonValue, inFolder: JsonValue): JsonObject {
  return restoreSecrets(output, plain, inFolder) as JsonObject;
}

function restoreSecrets(value: JsonValue, plain: JsonValue | undefined, inFolder: JsonValue | undefined): JsonValue {
  const childOf = (parent: JsonValue | undefined, key: string | number): JsonValue | undefined => {
    if (typeof key === 'number') return Array.isArray(parent) ? parent[key] : undefined;
    return isJsonObject(parent) ? parent.get(key) : undefined;
  };
  if (Array.isArray(value)) return value.map((v, i) => restoreSecrets(v, childOf(plain, i), childOf(inFolder, i)));
  if (!isJsonObject(value)) return value;
  const out: JsonObject = new Map();
  for (const [k, v] of value) {
    const [p, f] = [childOf(plain, k), childOf(inFolder, k)];
    if (!k.startsWith('#') || isJsonObject(v) || Array.isArray(v) || v === null) out.set(k, restoreSecrets(v, p, f));
    else out.set(k, p === v && f !== undefined ? f : '[hidden]');
  }
  return out;
}
