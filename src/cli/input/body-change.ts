import type { Readable } from 'node:stream';
import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import type { JsonValue } from '../../json/index.js';
import { describeChanges } from './changed-paths.js';
import { editJson } from './editor.js';
import { MAX_VALUE_BYTES, readInput, sourceName, STDIN } from './input-source.js';
import { readJsonFile } from './json-input.js';
import { formatPath, parseAssignment, parsePath, setAt, type PathStep } from './json-path.js';
import { promptHidden } from './secret-prompt.js';

/**
 * How a command gets a new configuration body: `--file` (`-`: standard input), then `--set
 * path=value`, `--set-file path=FILE` and `--set-secret path` on top — or the editor. Secrets
 * never need to be on the command line (shell history, `ps`): `--set-secret` reads them from a
 * prompt that does not echo, or from standard input, and `--set-file` from a file.
 */

export interface BodyArgs {
  file?: string;
  set?: string[];
  'set-file'?: string[];
  'set-secret'?: string[];
}

export const bodyOptions = <T>(y: Argv<T>) =>
  y
    .option('file', {
      type: 'string',
      nargs: 1,
      describe: 'the configuration body (JSON) from this file; "-" reads standard input',
    })
    .option('set', {
      type: 'string',
      array: true,
      nargs: 1,
      describe:
        'set path=value in the body (repeatable; e.g. parameters.config.jobs[0].endpoint=users; the value is JSON when it parses as JSON, else text; one starting with {, [ or " must be JSON)',
    })
    .option('set-file', {
      type: 'string',
      array: true,
      nargs: 1,
      describe:
        'set path=FILE: the value is the text of FILE ("-": standard input) without its final newline (repeatable; e.g. parameters.api.caCertificate=ca.pem)',
    })
    .option('set-secret', {
      type: 'string',
      array: true,
      nargs: 1,
      describe:
        'set a # key (e.g. parameters.#token) to a value typed at a prompt that does not echo it, or read from standard input when it is not a terminal: never on the command line',
    }) as Argv<T & BodyArgs>;

/** Where values come from: the process's standard input and terminal; tests replace them. */
export interface BodyInput {
  stdin: Readable & { isTTY?: boolean };
  prompt: (text: string) => Promise<string>;
}

const PROCESS_INPUT: BodyInput = { stdin: process.stdin, prompt: (text) => promptHidden(text) };

/** A value read from a file or standard input ends without the newline an editor or `echo` adds. */
function withoutFinalNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/** `path=FILE` split at the first `=`. */
function fileAssignment(assignment: string): { path: PathStep[]; source: string } {
  const eq = assignment.indexOf('=');
  if (eq < 0 || eq === assignment.length - 1)
    throw new UserError(
      'GEX_CLI_USAGE',
      '--set-file takes path=FILE, e.g. parameters.api.caCertificate=ca.pem ("-" for standard input)',
    );
  return { path: parsePath(assignment.slice(0, eq), '--set-file'), source: assignment.slice(eq + 1) };
}

/** A `--set-secret` path: it must end in a `#` key, or the value would be stored as plain text. */
function secretPath(text: string): PathStep[] {
  const path = parsePath(text, '--set-secret');
  const last = path[path.length - 1];
  if (typeof last !== 'string' || !last.startsWith('#')) {
    throw new UserError(
      'GEX_CLI_USAGE',
      `--set-secret ${formatPath(path)}: the last key must start with "#" (e.g. parameters.#token): only # values are stored encrypted. ` +
        'To set a plain value from a file or standard input, use --set-file PATH=FILE.',
    );
  }
  return path;
}

/** Refuses two options that both want standard input: one stream cannot give two values. */
function checkOneStdinReader(readers: string[]): void {
  if (readers.length > 1)
    throw new UserError(
      'GEX_CLI_USAGE',
      `${readers.join(' and ')} both read standard input: give one of them a file instead`,
    );
}

/**
 * `base` (or the file's body) with every `--set`, `--set-file` and `--set-secret` applied, in that
 * order; undefined when none was given. Every option is checked before anything is read, and no
 * value read appears in an error.
 */
export async function bodyFromArgs(
  base: JsonValue,
  args: BodyArgs,
  input: BodyInput = PROCESS_INPUT,
): Promise<JsonValue | undefined> {
  const sets = (args.set ?? []).map(parseAssignment);
  const files = (args['set-file'] ?? []).map(fileAssignment);
  const secrets = (args['set-secret'] ?? []).map(secretPath);
  if (args.file === undefined && sets.length + files.length + secrets.length === 0) return undefined;
  const fromTerminal = Boolean(input.stdin.isTTY);
  checkOneStdinReader([
    ...(args.file === STDIN ? ['--file -'] : []),
    ...files.filter((f) => f.source === STDIN).map((f) => `--set-file ${formatPath(f.path)}=-`),
    ...(fromTerminal ? [] : secrets.map((path) => `--set-secret ${formatPath(path)}`)),
  ]);
  if (args.file === STDIN && fromTerminal)
    throw new UserError(
      'GEX_CLI_USAGE',
      '--file - reads the body from standard input, which is a terminal here: pipe the JSON in, or name a file',
    );

  let body = args.file === undefined ? base : await readJsonFile(args.file, input.stdin);
  for (const { path, value } of sets) body = setAt(body, path, value);
  for (const { path, source } of files) {
    body = setAt(body, path, withoutFinalNewline(await readInput(source, MAX_VALUE_BYTES, input.stdin)), '--set-file');
  }
  for (const path of secrets) {
    const shown = formatPath(path);
    const value = fromTerminal
      ? await input.prompt(`Value of ${shown} (not shown): `)
      : withoutFinalNewline(await readInput(STDIN, MAX_VALUE_BYTES, input.stdin));
    if (value === '')
      throw new UserError(
        'GEX_INPUT_INVALID',
        `--set-secret ${shown}: the value is empty (${fromTerminal ? 'nothing was typed' : `nothing came on ${sourceName(STDIN)}`}); nothing was changed`,
      );
    body = setAt(body, path, value, '--set-secret');
  }
  return body;
}

/**
 * The new body of an edit: from `--file`/`--set`, else — when `editor` — from the editor opened
 * on the current body; undefined when nothing was given or the edited file was left unchanged.
 * `check` judges it before it is returned (in the editor: a refusal opens it again at a terminal).
 */
export async function editedBody(
  current: JsonValue,
  args: BodyArgs,
  editor: { open: boolean; fileName: string },
  check: (body: JsonValue) => Promise<void> = async () => undefined,
): Promise<JsonValue | undefined> {
  const fromArgs = await bodyFromArgs(current, args);
  if (fromArgs !== undefined) await check(fromArgs);
  if (fromArgs !== undefined || !editor.open) return fromArgs;
  return editJson(current, editor.fileName, {
    interactive: Boolean(process.stdin.isTTY),
    notice: (line) => process.stderr.write(`${line}\n`),
    check,
  });
}

/** A change description naming what changed (never values: they may be secrets). */
export function changeSummary(
  before: { configuration: JsonValue; name: string; description: string },
  change: { configuration?: JsonValue; name?: string; description?: string },
): string {
  const parts: string[] = [];
  if (change.configuration !== undefined) {
    const paths = describeChanges(before.configuration, change.configuration);
    if (paths) parts.push(paths);
  }
  if (change.name !== undefined && change.name !== before.name) parts.push('name');
  if (change.description !== undefined && change.description !== before.description) parts.push('description');
  return parts.join(', ');
}
