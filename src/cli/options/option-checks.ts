import { displayText } from '../../common/log-text.js';
import { closestKey } from '../../extractor/config/closest-key.js';

/**
 * Rules every option of every command follows, checked in one place (main.ts registers them for
 * all commands): an option that takes a value never silently runs without one, a number option
 * holds a whole number in its range, and a mistyped option gets the nearest real one.
 */

/**
 * The options whose value may be left out, meaning that option's own default: `gex run --wait`
 * (an hour), `gex configs import --new-id` (an id the store draws). Every other option that takes
 * a value and is given without one is an error.
 */
export const OPTIONAL_VALUE_OPTIONS: ReadonlySet<string> = new Set(['wait', 'new-id']);

/**
 * The options for which an empty value means something: a text that may be empty (a name, a
 * description), a filter on empty values, no enclosure. For every other option an empty value —
 * `--config-id "$ID"` with `$ID` unset — is no value, and an error like none at all.
 */
export const EMPTY_VALUE_OPTIONS: ReadonlySet<string> = new Set([
  'name',
  'description',
  'change-description',
  'where-value',
  'where-values',
  'enclosure',
]);

/** What yargs' getOptions() says of the options of the command being run (the parts used here). */
export interface KnownOptions {
  string: string[];
  number: string[];
  array: string[];
  boolean: string[];
  count?: string[];
  /** options declared with `nargs`: yargs itself refuses them without a value (and takes "-2 days" as one) */
  narg: Record<string, number>;
  alias: Record<string, string[]>;
  key: Record<string, unknown>;
}

/** `config-id` → `configId`: yargs accepts both spellings. */
function camelCase(name: string): string {
  return name.replace(/-+([^-])/g, (_, c: string) => c.toUpperCase());
}

/** A token yargs reads as a value even though it starts with "-": a negative number (yargs-parser's rule). */
const NEGATIVE_NUMBER = /^-([0-9]+(\.[0-9]+)?|\.[0-9]+)$/;

/** Every spelling of each option (its name, aliases, camelCase forms) → its name. */
function spellings(options: KnownOptions): Map<string, string> {
  const names = new Map<string, string>();
  for (const key of Object.keys(options.key)) {
    for (const spelling of [key, ...(options.alias[key] ?? [])]) {
      names.set(spelling, key);
      names.set(camelCase(spelling), key);
    }
  }
  return names;
}

/** The options that take a value (not flags). */
function valueOptions(options: KnownOptions): Set<string> {
  const flags = new Set([...options.boolean, ...(options.count ?? [])]);
  return new Set([...options.string, ...options.number, ...options.array].filter((key) => !flags.has(key)));
}

/** An option as the command line gives it: its name, the token, and its value as yargs reads it. */
interface GivenOption {
  name: string;
  token: string;
  /** `--name=value` or the next token when yargs takes it as the value; undefined: none */
  value?: string;
  /** `--no-name` */
  negated: boolean;
}

/** The options of `args` that take a value (not flags, not after `--`), as given. */
function givenValueOptions(args: readonly string[], options: KnownOptions): GivenOption[] {
  const names = spellings(options);
  const takesValue = valueOptions(options);
  const given: GivenOption[] = [];
  for (let i = 0; i < args.length; i++) {
    const token = args[i];
    if (token === '--') break;
    const m = /^(?:--([^=]+)(=[\s\S]*)?|-([A-Za-z]))$/.exec(token);
    if (!m) continue;
    const spelled = m[1] ?? m[3];
    const negated = /^no-(.+)$/.exec(spelled)?.[1];
    if (negated !== undefined && !names.has(spelled) && takesValue.has(names.get(negated) ?? '')) {
      given.push({ name: names.get(negated)!, token, negated: true });
      continue;
    }
    const name = names.get(spelled);
    if (name === undefined || !takesValue.has(name)) continue;
    if (m[2] !== undefined) {
      given.push({ name, token, value: m[2].slice(1), negated: false });
      continue;
    }
    const next = args[i + 1];
    // what yargs takes as the value: with nargs any token but an option; else no "-…" but a negative number
    const isValue =
      next !== undefined &&
      (options.narg[name] !== undefined
        ? !/^-[^0-9]/.test(next) || NEGATIVE_NUMBER.test(next)
        : !next.startsWith('-') || NEGATIVE_NUMBER.test(next));
    given.push({ name, token, value: isValue ? next : undefined, negated: false });
    if (isValue) i++;
  }
  return given;
}

/**
 * The first option of `args` that takes a value and was given none — at the end of the command
 * line, or followed by another option (`gex run --config-id --store x`) — or negated as a flag
 * (`--no-store`); undefined when every one has its value. yargs would take such an option as an
 * empty string or leave it out, and the command would fall back to something the user did not
 * ask for (`gex run --config-id` running a data folder). An empty value (or blanks) is no value
 * either, but for the options of EMPTY_VALUE_OPTIONS (`--description ''`); the options of
 * OPTIONAL_VALUE_OPTIONS may go without.
 */
export function missingValueProblem(args: readonly string[], options: KnownOptions): string | undefined {
  for (const option of givenValueOptions(args, options)) {
    if (option.negated)
      return `--${option.name} takes a value: ${displayText(option.token)} is not an option (leave --${option.name} out for its default)`;
    if (OPTIONAL_VALUE_OPTIONS.has(option.name)) continue;
    if (option.value === undefined) return `--${option.name} needs a value, and none was given`;
    if (option.value.trim() === '' && !EMPTY_VALUE_OPTIONS.has(option.name))
      return `--${option.name} needs a value, and it was given an empty one`;
  }
  return undefined;
}

/**
 * A number option whose text is not a whole number: yargs reads `''` as 0, `abc` as NaN and
 * `0x10` as 16. Every number option of gex is a whole number written in decimal digits.
 */
export function numberTextProblem(args: readonly string[], options: KnownOptions): string | undefined {
  const numbers = new Set(options.number);
  for (const option of givenValueOptions(args, options)) {
    if (!numbers.has(option.name) || option.value === undefined || /^-?\d+$/.test(option.value)) continue;
    return `--${option.name} takes a whole number, got ${displayText(JSON.stringify(option.value))}`;
  }
  return undefined;
}

/**
 * A whole-number option from `min` to `max`: checked when the command line is read, so that a
 * value out of range is exit 1 with this message (`--port takes a whole number from 0 to
 * 65535, got 99999`), never a failure deep inside the command.
 */
export function integerOption(
  name: string,
  spec: { min: number; max: number; default?: number; describe?: string; unit?: string },
): { type: 'number'; default?: number; describe: string; coerce: (value: unknown) => number } {
  const range = `a whole number${spec.unit ? ` of ${spec.unit}` : ''} from ${spec.min} to ${spec.max}`;
  return {
    type: 'number',
    ...(spec.default === undefined ? {} : { default: spec.default }),
    describe: spec.describe === undefined ? range : `${spec.describe} (${range})`,
    coerce: (value: unknown) => {
      // given without a value: missingValueProblem says so once the line is read
      if (value === undefined) return undefined as unknown as number;
      if (Array.isArray(value)) throw new Error(`--${name} takes one value, got ${value.length}`);
      const n = value as number;
      if (!Number.isSafeInteger(n) || n < spec.min || n > spec.max)
        throw new Error(`--${name} takes ${range}${Number.isNaN(n) ? '' : `, got ${n}`}`);
      return n;
    },
  };
}

/**
 * yargs' "Unknown argument(s): cofnig-id, cofnigId" as one line per option the user typed,
 * `Unknown argument: --cofnig-id. Did you mean --config-id?`; undefined when no option of `args`
 * is unknown (an extra positional: yargs' message stands).
 */
export function unknownOptionMessage(args: readonly string[], options: KnownOptions): string | undefined {
  const names = spellings(options);
  const candidates = Object.keys(options.key).filter((key) => key !== '$0' && key !== '_');
  const lines: string[] = [];
  for (const token of args) {
    if (token === '--') break;
    const spelled = /^--?([^=]+)/.exec(token)?.[1];
    if (spelled === undefined || token === '-' || NEGATIVE_NUMBER.test(token)) continue;
    const plain = /^no-(.+)$/.exec(spelled)?.[1];
    if (names.has(spelled) || (plain !== undefined && names.has(plain))) continue;
    // a cluster of short flags (-Vx) is yargs' business; only a long option is suggested for
    const near = token.startsWith('--') ? closestKey(spelled, candidates) : undefined;
    lines.push(`Unknown argument: ${displayText(token.split('=')[0])}${near ? `. Did you mean --${near}?` : ''}`);
  }
  return lines.length > 0 ? lines.join('\n') : undefined;
}
