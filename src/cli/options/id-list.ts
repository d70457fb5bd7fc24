import { displayId, displayOption } from '../../common/log-text.js';

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

/**
 * Said after creating an id that starts with `-` (Keboola allows any id, so gex does): on a
 * command line it must be given as `--option=ID`, and a command taking it as an argument cannot
 * name it. gex itself never puts an id on a command line (a queue job reads its ids from a file).
 */
export function optionLikeIdNote(option: string, id: string): string | undefined {
  if (!id.startsWith('-')) return undefined;
  return `Note: the id ${displayId(id)} starts with "-": on a command line give it as ${displayOption(option, id)} (apart, it is read as an option); a command that takes an id as an argument cannot name it — use the Storage API there.`;
}
