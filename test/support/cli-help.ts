import assert from 'node:assert/strict';
import { runGexInProcess } from './in-process-gex.js';

/**
 * Every command and action of gex with its positionals and options, as `gex … --help` lists them
 * (the user-visible truth): tests that must try every command take the list from here, so a
 * command added later is tried too.
 */

export interface OptionHelp {
  name: string;
  type: 'string' | 'number' | 'boolean' | 'array';
  describe: string;
  required: boolean;
}

export interface CommandHelp {
  path: string[];
  positionals: string[];
  options: OptionHelp[];
  subcommands: string[];
}

export const BUILT_IN_DESCRIPTIONS = new Set(['Show help', 'Show the version of gex']);

function section(text: string, title: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(`${title}:`);
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && line.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

function parseHelp(commandPath: string[], text: string): CommandHelp {
  const options = section(text, 'Options').flatMap((line): OptionHelp[] => {
    // an alias follows the name: `--component-id, --component  …`
    const m = /^\s+(?:-\w, )?--([\w-]+)(?:, --?[\w-]+)*\s+(.*)$/.exec(line);
    if (!m) return [];
    const type = /\[(string|number|boolean|array)\]/.exec(m[2])?.[1];
    // every option says what it takes (a choice too is a string), so that no value is read as something else
    assert.ok(type, `gex ${commandPath.join(' ')}: no type in the help line ${JSON.stringify(line)}`);
    const describe = m[2].replace(/\s*\[.*$/, '').trim();
    return [{ name: m[1], type: type as OptionHelp['type'], describe, required: m[2].includes('[required]') }];
  });
  const positionals = section(text, 'Positionals').flatMap((line) => /^\s+(\S+)\s/.exec(line)?.[1] ?? []);
  const subcommands = section(text, 'Commands').flatMap(
    (line) => new RegExp(`^\\s+gex ${commandPath.map((w) => `${w} `).join('')}(\\S+)`).exec(line)?.[1] ?? [],
  );
  return { path: commandPath, positionals, options, subcommands };
}

export async function helpTree(): Promise<CommandHelp[]> {
  const found: CommandHelp[] = [];
  const visit = async (commandPath: string[]): Promise<void> => {
    const r = await runGexInProcess([...commandPath, '--help']);
    assert.equal(r.code, 0, `gex ${commandPath.join(' ')} --help: ${r.stderr}`);
    const help = parseHelp(commandPath, r.stdout);
    found.push(help);
    for (const sub of help.subcommands) await visit([...commandPath, sub]);
  };
  await visit([]);
  return found;
}

/** The command line of `command` with its positionals and required options filled in (values no store holds). */
export function commandLine(command: CommandHelp, except?: string): string[] {
  const required = command.options.filter((o) => o.required && o.name !== except);
  return [
    ...command.path,
    ...command.positionals.map((_, i) => `no-such-${i + 1}`),
    ...required.flatMap((o) =>
      o.type === 'boolean' ? [`--${o.name}`] : [`--${o.name}`, o.type === 'number' ? '1' : 'x'],
    ),
  ];
}
