import { pino, type Logger } from 'pino';
import { BatchedOutput } from './batched-output.js';
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
      const masked = masker.mask(line);
      options.progress?.clear();
      const record = parseRecord(masked);
      const toStderr = record !== null && (record.level === 'error' || record.level === 'fatal');
      if (toStderr) batched?.flush();
      const target = toStderr ? stderr : stdout;
      target.write(format === 'json' || !record ? masked : renderText(record));
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
      // as renderText shows a string or a number
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
    return JSON.parse(line) as LogRecord;
  } catch {
    return null;
  }
}

function renderText(record: LogRecord): string {
  const { level, time, msg } = record;
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  // a plain loop: this runs for every line (a request log line per request in gex serve)
  let extra = '';
  for (const k in record) {
    if (k === 'level' || k === 'time' || k === 'msg') continue;
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
