import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../common/errors.js';
import { displayText } from '../../common/log-text.js';
import { sentence } from '../../common/text.js';
import { decodeJson, JsonSyntaxError, prettyExact, type JsonValue } from '../../json/index.js';

export interface EditorOptions {
  env?: NodeJS.ProcessEnv;
  /** a person at a terminal: invalid JSON re-opens the editor instead of failing */
  interactive?: boolean;
  /** says why the editor opens again */
  notice?: (line: string) => void;
  /**
   * judges the edited value before it is taken; a UserError it throws is a problem of the edit
   * (shown, and the editor opens again on the edited text when interactive) — so that a body the
   * store would refuse does not cost the edits made
   */
  check?: (value: JsonValue) => Promise<void>;
}

/** `$EDITOR`, else `$VISUAL`, else vi. */
export function editorCommand(env: NodeJS.ProcessEnv): string {
  return env.EDITOR?.trim() || env.VISUAL?.trim() || 'vi';
}

/** Runs the editor command through the shell (it may hold options: `code --wait`); the file goes as `$1`, never into the command text. */
function runEditor(command: string, file: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', `${command} "$1"`, 'gex-editor', file], { stdio: 'inherit', env });
    child.on('error', (e) =>
      reject(new UserError('GEX_INPUT_INVALID', `Cannot start the editor ${JSON.stringify(command)}: ${e.message}`)),
    );
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new UserError(
            'GEX_INPUT_INVALID',
            `The editor ${JSON.stringify(command)} ended with ${signal ?? `exit code ${code}`}: nothing was changed`,
          ),
        );
    });
  });
}

/**
 * Opens the editor on `value` as pretty JSON in a private temporary file (folder 0700, file 0600,
 * removed afterwards) and returns what was saved, or undefined when the file was left unchanged.
 * Invalid JSON fails naming its line and column, a value `check` refuses with its reason; when
 * interactive the editor opens again on the edited text, until it is taken or saved unchanged
 * (giving up).
 */
export async function editJson(
  value: JsonValue,
  name: string,
  options: EditorOptions = {},
): Promise<JsonValue | undefined> {
  const env = options.env ?? process.env;
  const original = `${prettyExact(value)}\n`;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-edit-'));
  const file = path.join(dir, name);
  try {
    await writeFile(file, original, { mode: 0o600, flag: 'wx' });
    let previous = original;
    for (;;) {
      await runEditor(editorCommand(env), file, env);
      const text = await readFile(file, 'utf8');
      if (text === original) return undefined;
      let problem: string;
      try {
        const edited = decodeJson(text);
        await options.check?.(edited);
        return edited;
      } catch (e) {
        if (e instanceof JsonSyntaxError) problem = `The edited file is not valid JSON: ${displayText(e.message)}`;
        else if (e instanceof UserError && options.check) problem = e.message;
        else throw e;
      }
      if (!options.interactive || text === previous)
        throw new UserError('GEX_INPUT_INVALID', `${sentence(problem)} Nothing was changed.`);
      options.notice?.(`${sentence(problem)} Opening the editor again; save the file unchanged to give up.`);
      previous = text;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
