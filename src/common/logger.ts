import { BatchedOutput } from './batched-output.js';
import { isStructuredField } from './log-fields.js';
import { displayText } from './log-text.js';
import type { LogFile } from './log-file.js';
import type { ProgressLine } from './progress-line.js';
import { SecretMasker } from './secret-masker.js';
import { maskUrlSignatures } from './url-signature.js';

export type LogFormat = 'text' | 'json';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Every level a line can have; `trace` and `fatal` are there for fastify, which calls them. */
type LineLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

const LEVEL_VALUES: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};

/** `logger.info('text')`, or `logger.info({ fields }, 'text')`; an error alone is `{ err }`. */
export interface LogFn {
  (msg: string): void;
  (fields: unknown, msg?: string): void;
}

export interface ChildOptions {
  /** a level of its own (fastify: a route's `logLevel`) */
  level?: string;
  /** field name → what to log for its value (fastify passes serializers of `req`, `res`, `err`) */
  serializers?: Record<string, (value: never) => unknown>;
  /** more secrets to hide in this logger's lines (extract() used as a library, with its own secrets) */
  masker?: SecretMasker;
  /** text format: show every field, structured ones too (a line whose sentence is its fields: a request) */
  showFields?: boolean;
}

/**
 * gex's logger, for the CLI and the server alike (fastify takes it as its `loggerInstance`): the
 * levels, child loggers that bind fields, and nothing else.
 */
export interface Logger {
  level: string;
  isLevelEnabled(level: string): boolean;
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  silent: LogFn;
  child(bindings: Record<string, unknown>, options?: ChildOptions): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  masker?: SecretMasker;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  progress?: ProgressLine;
  /** every line also goes to this file (`--log-file`), masked like the rest */
  file?: LogFile;
  /**
   * write the lines of one event-loop turn to stdout together (see BatchedOutput): for a server
   * logging every request; error lines still go out at once, after what is pending
   */
  batchStdout?: boolean;
}

/** How a logger's lines are built: the child options that reach the writer. */
interface LineView {
  serializers?: Record<string, (value: never) => unknown>;
  maskers: SecretMasker[];
  showFields: boolean;
}

const HIDDEN_LINE = '[hidden: this log line contained a secret outside its text]';
/** nesting of logged objects shown at most; deeper values are named, not walked */
const MAX_DEPTH = 8;

/**
 * The one place every log line is built and written. A line is rendered straight from its fields
 * (no serialise-and-parse step) and secrets are hidden in it before it leaves: a text line is
 * masked as a whole; a JSON line is checked as a whole (one pattern match: the common case has no
 * secret) and, when it holds one, built again from masked keys and strings, so it stays valid JSON
 * whatever the secret looks like. A secret still in it then (a number, a form spanning JSON
 * syntax) hides all of the line but its level and time. The signing parameters of any pre-signed
 * address in a line are masked too (maskUrlSignatures). Info, warnings and debug lines go to
 * stdout, errors to stderr (Keboola's convention); a log file (`--log-file`) gets every line.
 */
class LogWriter {
  private readonly stdout: { write(text: string): unknown };
  private readonly batched: BatchedOutput | undefined;
  private readonly batchedFile: BatchedOutput | undefined;

  constructor(
    readonly format: LogFormat,
    readonly masker: SecretMasker,
    stdout: NodeJS.WritableStream,
    private readonly stderr: NodeJS.WritableStream,
    private readonly progress: ProgressLine | undefined,
    private readonly file: LogFile | undefined,
    batch: boolean,
  ) {
    this.batched = batch ? new BatchedOutput(stdout) : undefined;
    this.stdout = this.batched ?? stdout;
    this.batchedFile = batch && file ? new BatchedOutput(file) : undefined;
  }

  write(
    level: LineLevel,
    bindings: Record<string, unknown>,
    fields: unknown,
    msg: string | undefined,
    view: LineView,
  ): void {
    if (fields instanceof Error) fields = { err: fields };
    const line =
      this.format === 'json'
        ? this.jsonLine(level, bindings, fields, msg, view)
        : this.textLine(level, bindings, fields, msg, view);
    this.progress?.clear();
    const toStderr = level === 'error' || level === 'fatal';
    if (toStderr) {
      this.batched?.flush();
      this.stderr.write(line);
    } else this.stdout.write(line);
    if (!this.file) return;
    if (toStderr) {
      this.batchedFile?.flush();
      this.file.write(line);
    } else (this.batchedFile ?? this.file).write(line);
  }

  private maskAll(text: string, view: LineView): string {
    // a pre-signed address grants access until it expires: its signature never reaches a log
    text = maskUrlSignatures(this.masker.mask(text));
    for (const extra of view.maskers) text = extra.mask(text);
    return text;
  }

  private jsonLine(
    level: LineLevel,
    bindings: Record<string, unknown>,
    fields: unknown,
    msg: string | undefined,
    view: LineView,
  ): string {
    const line = `${JSON.stringify(this.record(level, bindings, fields, msg, view, undefined))}\n`;
    if (this.maskAll(line, view) === line) return line;
    const masked = `${JSON.stringify(this.record(level, bindings, fields, msg, view, (s) => this.maskAll(s, view)))}\n`;
    if (this.maskAll(masked, view) === masked) return masked;
    return `${JSON.stringify({ level, time: new Date().toISOString(), msg: HIDDEN_LINE })}\n`;
  }

  private record(
    level: LineLevel,
    bindings: Record<string, unknown>,
    fields: unknown,
    msg: string | undefined,
    view: LineView,
    mask: Mask | undefined,
  ): Record<string, unknown> {
    const record: Record<string, unknown> = { level, time: new Date().toISOString() };
    addFields(record, bindings, view, mask);
    if (isFields(fields)) addFields(record, fields, view, mask);
    if (msg !== undefined) record.msg = mask ? mask(msg) : msg;
    return record;
  }

  private textLine(
    level: LineLevel,
    bindings: Record<string, unknown>,
    fields: unknown,
    msg: string | undefined,
    view: LineView,
  ): string {
    const head = `${new Date().toISOString().slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${msg ?? ''}`;
    const text: TextLine = { line: head, stacks: '' };
    addText(text, bindings, view);
    if (isFields(fields)) addText(text, fields, view);
    return this.maskAll(`${text.line}${text.stacks}\n`, view);
  }
}

interface TextLine {
  line: string;
  /** stacks of errors among the fields: they follow the line */
  stacks: string;
}

/** Printable ASCII only: nothing in it can break or hide part of a line (checked before displayText's slower test). */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function addText(text: TextLine, fields: Record<string, unknown>, view: LineView): void {
  for (const key in fields) {
    // gex's structured fields are for JSON lines: the sentence already says them
    if (!view.showFields && isStructuredField(key)) continue;
    const value = view.serializers ? serialized(view, key, fields[key]) : fields[key];
    if (typeof value === 'string') text.line += ` ${key}=${PRINTABLE_ASCII.test(value) ? value : displayText(value)}`;
    else if (typeof value === 'number') text.line += ` ${key}=${value}`;
    else if (value instanceof Error) text.stacks += `\n${value.stack ?? `${value.name}: ${value.message}`}`;
    else text.line += ` ${key}=${JSON.stringify(plain(value, undefined, 0, undefined))}`;
  }
}

function addFields(
  record: Record<string, unknown>,
  fields: Record<string, unknown>,
  view: LineView,
  mask: Mask | undefined,
): void {
  for (const key in fields) {
    const value = view.serializers ? serialized(view, key, fields[key]) : fields[key];
    // the common values as they are; anything else made safe for JSON (and masked) by plain()
    const shown =
      (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && !mask)
        ? value
        : plain(value, mask, 0, undefined);
    setKey(record, mask ? mask(key) : key, shown);
  }
}

type Mask = (text: string) => string;

function isFields(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}

function serialized(view: LineView, key: string, value: unknown): unknown {
  const serializer = view.serializers?.[key];
  if (!serializer) return value;
  try {
    return serializer(value as never);
  } catch {
    return '[unserializable]';
  }
}

/** Sets a key as an own property, `__proto__` included (assignment would change the prototype). */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * `value` as JSON can carry it, with `mask` applied to every key and string when given: errors as
 * their type, message, stack and own fields (a `code`), cycles and depth cut, getters that throw
 * named — a logged value is whatever a caller or a library handed over.
 */
function plain(value: unknown, mask: Mask | undefined, depth: number, seen: Set<object> | undefined): unknown {
  switch (typeof value) {
    case 'string':
      return mask ? mask(value) : value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'object':
      break;
  }
  if (value === null) return null;
  const object = value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  seen ??= new Set();
  if (seen.has(object)) return '[circular]';
  seen.add(object);
  try {
    if (Array.isArray(object)) return object.map((item) => plain(item, mask, depth + 1, seen) ?? null);
    if (object instanceof Date) return Number.isNaN(object.getTime()) ? null : object.toISOString();
    if (object instanceof Map) return plain(Object.fromEntries(object), mask, depth, seen);
    const out: Record<string, unknown> = {};
    if (object instanceof Error) {
      out.type = object.name;
      out.message = plain(object.message, mask, depth + 1, seen);
      out.stack = plain(object.stack, mask, depth + 1, seen);
    } else if (typeof (object as { toJSON?: unknown }).toJSON === 'function') {
      return plain((object as { toJSON: () => unknown }).toJSON(), mask, depth + 1, seen);
    }
    for (const key of Object.keys(object)) {
      const item = plain((object as Record<string, unknown>)[key], mask, depth + 1, seen);
      if (item !== undefined) setKey(out, mask ? mask(key) : key, item);
    }
    return out;
  } catch {
    return '[unserializable]';
  } finally {
    seen.delete(object);
  }
}

const NOOP: LogFn = () => undefined;

class GexLogger implements Logger {
  private threshold = Infinity;
  private levelName = 'silent';
  // a level below the logger's is a no-op function: a disabled debug call costs a call, nothing more
  trace: LogFn = NOOP;
  debug: LogFn = NOOP;
  info: LogFn = NOOP;
  warn: LogFn = NOOP;
  error: LogFn = NOOP;
  fatal: LogFn = NOOP;
  silent: LogFn = NOOP;

  constructor(
    private readonly writer: LogWriter | undefined,
    private readonly bindings: Record<string, unknown>,
    level: string,
    private readonly view: LineView,
  ) {
    this.level = level;
  }

  get level(): string {
    return this.levelName;
  }

  set level(level: string) {
    this.threshold = levelValue(level);
    this.levelName = level;
    this.trace = this.method('trace');
    this.debug = this.method('debug');
    this.info = this.method('info');
    this.warn = this.method('warn');
    this.error = this.method('error');
    this.fatal = this.method('fatal');
  }

  isLevelEnabled(level: string): boolean {
    return this.writer !== undefined && (LEVEL_VALUES[level] ?? Infinity) >= this.threshold;
  }

  private method(level: LineLevel): LogFn {
    const writer = this.writer;
    if (!writer || LEVEL_VALUES[level] < this.threshold) return NOOP;
    return (fields: unknown, msg?: string) => {
      if (typeof fields === 'string') writer.write(level, this.bindings, undefined, fields, this.view);
      else {
        const text = msg ?? (fields instanceof Error ? fields.message : undefined);
        writer.write(level, this.bindings, fields, text, this.view);
      }
    };
  }

  child(bindings: Record<string, unknown>, options?: ChildOptions): Logger {
    const merged = Object.keys(bindings).length === 0 ? this.bindings : { ...this.bindings, ...bindings };
    // fastify makes a child per request ({ reqId }, no options): nothing else to build then
    if (!options || (!options.serializers && !options.masker && options.showFields === undefined)) {
      return new GexLogger(this.writer, merged, options?.level ?? this.level, this.view);
    }
    const view: LineView = {
      serializers: options.serializers ? { ...this.view.serializers, ...options.serializers } : this.view.serializers,
      maskers: options.masker ? [...this.view.maskers, options.masker] : this.view.maskers,
      showFields: options.showFields ?? this.view.showFields,
    };
    return new GexLogger(this.writer, merged, options.level ?? this.level, view);
  }
}

function levelValue(level: string): number {
  const value = LEVEL_VALUES[level];
  if (value === undefined) throw new Error(`unknown log level ${JSON.stringify(level)}`);
  return value;
}

/**
 * The logger of a command or a server: lines in plain text (or JSON lines), secrets hidden in every
 * line, errors on stderr and the rest on stdout (see LogWriter).
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const writer = new LogWriter(
    options.format ?? 'text',
    options.masker ?? new SecretMasker(),
    options.stdout ?? process.stdout,
    options.stderr ?? process.stderr,
    options.progress,
    options.file,
    options.batchStdout ?? false,
  );
  return new GexLogger(writer, {}, options.level ?? 'info', { maskers: [], showFields: false });
}

/** A logger that discards everything (library use and tests). */
export function silentLogger(): Logger {
  return new GexLogger(undefined, {}, 'silent', { maskers: [], showFields: false });
}
