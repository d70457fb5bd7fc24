/**
 * Ids given as a comma list and/or repeated (`--row-id a,b --row-id c`, `KBC_CONFIGROWID=a,b`):
 * one list, in order, blanks dropped. An id containing a comma cannot be named this way.
 */
export function splitIdList(values: unknown): string[] {
  const list = values === undefined || values === null ? [] : Array.isArray(values) ? values : [values];
  return list
    .flatMap((v) => String(v).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}
