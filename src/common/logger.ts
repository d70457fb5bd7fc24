import { pino, type Logger } from 'pino';
import { BatchedOutput } from './batched-output.js';
import { isStructuredField } from './log-fields.js';
import type { ProgressLine } from './progress-line.js';
import { SecretMasker } from './secret-masker.js';

export type { Logger } from 'pino';
export type LogFormat = 'text' | 'json';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  masker?: SecretMasker;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  progress?: ProgressLine;
  /**
   * write the lines of one event-loop turn to stdout together (see BatchedOutput): for a server
   * logging every request; error lines still go out at once, after what is pending
   */
  batchStdout?: boolean;
}

/**
 * pino for structured logging, with a sink that hides secrets in every line (the single place all
 * output passes, so nothing can bypass it), writes errors to stderr and the rest to stdout (the
 * Keboola event convention) and renders plain text unless JSON lines are asked for.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const masker = options.masker ?? new SecretMasker();
  const stdoutStream = options.stdout ?? process.stdout;
  const batched = options.batchStdout ? new BatchedOutput(stdoutStream) : undefined;
  const stdout = batched ?? stdoutStream;
  const stderr = options.stderr ?? process.stderr;
  const format = options.format ?? 'text';
  const sink = {
    write(line: string): void {
      options.progress?.clear();
      const { record, json } = maskedRecord(line, masker);
      const toStderr = record !== null && (record.level === 'error' || record.level === 'fatal');
      if (toStderr) batched?.flush();
      const target = toStderr ? stderr : stdout;
      target.write(format === 'json' || !record ? json : renderText(record));
    },
  };
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    sink,
  );
  // the line logger[level](fields, msg) gives, built without pino's serialisation and the sink's
  // parse; masked like every other line
  recordWriters.set(logger, (level, fields, msg) => {
    if (!logger.isLevelEnabled(level)) return;
    const time = new Date().toISOString();
    let line: string;
    if (format === 'json') line = `${JSON.stringify({ level, time, ...fields, msg })}\n`;
    else {
      line = `${time.slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${msg}`;
      // every field, structured ones too: a request line has no sentence besides its fields
      for (const key in fields) line += ` ${key}=${fields[key]}`;
      line += '\n';
    }
    options.progress?.clear();
    stdout.write(masker.mask(line));
  });
  return logger;
}

/** Writes one info or debug line of `fields` and `msg` to a logger made by createLogger. */
export type RecordWriter = (level: 'info' | 'debug', fields: Record<string, string | number>, msg: string) => void;

const recordWriters = new WeakMap<object, RecordWriter>();

/**
 * A cheaper way to write a line to a logger made by createLogger, for a line per request (gex
 * serve's request log: pino's serialisation and the text sink's parse were most of its cost);
 * undefined for any other logger.
 */
export function recordWriterOf(logger: object): RecordWriter | undefined {
  return recordWriters.get(logger);
}

interface LogRecord {
  level: string;
  time?: string;
  msg?: string;
  [key: string]: unknown;
}

function parseRecord(line: string): LogRecord | null {
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as LogRecord) : null;
  } catch {
    return null;
  }
}

/**
 * The record of one pino line with secrets hidden in every field, key and string — every field,
 * not only `msg`, can carry one (a URL, an error an API echoed) — and the line to write for it.
 * A line in which the masker finds no secret is used as pino wrote it (the common case, one
 * pattern match). Otherwise the parsed strings are masked, which keeps the line valid JSON
 * whatever a secret looks like; a secret still found in the serialized line (one written as a
 * number, or spanning JSON syntax) hides the whole line but its level and time. A line that is
 * not a record is masked as text.
 */
function maskedRecord(line: string, masker: SecretMasker): { record: LogRecord | null; json: string } {
  const record = parseRecord(line);
  if (!record) return { record: null, json: masker.mask(line) };
  if (masker.mask(line) === line) return { record, json: line };
  const masked = masker.maskPlain(record) as LogRecord;
  const json = JSON.stringify(masked);
  if (masker.mask(json) === json) return { record: masked, json: `${json}\n` };
  const hidden: LogRecord = { level: String(masked.level), time: masked.time, msg: '[hidden: this log line contained a secret outside its text]' };
  return { record: hidden, json: `${JSON.stringify(hidden)}\n` };
}

function renderText(record: LogRecord): string {
  const { level, time, msg } = record;
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  // a plain loop: this runs for every line (a request log line per request in gex serve)
  let extra = '';
  for (const k in record) {
    // gex's structured fields are for JSON lines: the sentence already says them
    if (k === 'level' || k === 'time' || k === 'msg' || isStructuredField(k)) continue;
    const v = record[k];
    if (k === 'err' && v && typeof v === 'object' && 'stack' in v) extra += `\n${String(v.stack)}`;
    else extra += ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
  }
  return `${clock} ${level.toUpperCase().padEnd(5)} ${msg ?? ''}${extra}\n`;
}

/** A logger that discards everything (library use and tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
