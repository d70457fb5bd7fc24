import type { Argv } from 'yargs';
import type { JsonValue } from '../json/index.js';
import { describeChanges } from './changed-paths.js';
import { editJson } from './editor.js';
import { readJsonFile } from './json-input.js';
import { parseAssignment, setAt } from './json-path.js';

/** How a command gets a new configuration body: `--file`, `--set path=value` (on top), or the editor. */

export interface BodyArgs {
  file?: string;
  set?: string[];
}

export const bodyOptions = <T>(y: Argv<T>) =>
  y
    .option('file', { type: 'string', describe: 'the configuration body (JSON) from this file' })
    .option('set', {
      type: 'string',
      array: true,
      describe: 'set path=value in the body (repeatable; e.g. parameters.config.jobs[0].endpoint=users; the value is JSON when it parses as JSON, else text)',
    }) as Argv<T & BodyArgs>;

/** `base` (or the file's body) with every `--set` applied; undefined when neither was given. */
export async function bodyFromArgs(base: JsonValue, args: BodyArgs): Promise<JsonValue | undefined> {
  const sets = (args.set ?? []).map(parseAssignment);
  if (args.file === undefined && sets.length === 0) return undefined;
  let body = args.file === undefined ? base : await readJsonFile(args.file);
  for (const { path, value } of sets) body = setAt(body, path, value);
  return body;
}

/**
 * The new body of an edit: from `--file`/`--set`, else — when `editor` — from the editor opened
 * on the current body; undefined when nothing was given or the edited file was left unchanged.
 */
export async function editedBody(current: JsonValue, args: BodyArgs, editor: { open: boolean; fileName: string }): Promise<JsonValue | undefined> {
  const fromArgs = await bodyFromArgs(current, args);
  if (fromArgs !== undefined || !editor.open) return fromArgs;
  return editJson(current, editor.fileName, { interactive: Boolean(process.stdin.isTTY), notice: (line) => process.stderr.write(`${line}\n`) });
}

/** A change description naming what changed (never values: they may be secrets). */
export function changeSummary(before: { configuration: JsonValue; name: string; description: string }, change: { configuration?: JsonValue; name?: string; description?: string }): string {
  const parts: string[] = [];
  if (change.configuration !== undefined) {
    const paths = describeChanges(before.configuration, change.configuration);
    if (paths) parts.push(paths);
  }
  if (change.name !== undefined && change.name !== before.name) parts.push('name');
  if (change.description !== undefined && change.description !== before.description) parts.push('description');
  return parts.join(', ');
}
