import { pino, type Logger } from 'pino';
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
}

/**
 * pino for structured logging, with a sink that hides secrets in every line (the single place all
 * output passes, so nothing can bypass it), writes errors to stderr and the rest to stdout (the
 * Keboola event convention) and renders plain text unless JSON lines are asked for.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const masker = options.masker ?? new SecretMasker();
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const format = options.format ?? 'text';
  const sink = {
    write(line: string): void {
      const masked = masker.mask(line);
      options.progress?.clear();
      const record = parseRecord(masked);
      const target = record && (record.level === 'error' || record.level === 'fatal') ? stderr : stdout;
      target.write(format === 'json' || !record ? masked : renderText(record));
    },
  };
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    sink,
  );
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
  const { level, time, msg, ...fields } = record;
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const extra = Object.entries(fields)
    .map(([k, v]) => (k === 'err' && v && typeof v === 'object' && 'stack' in v ? `\n${String(v.stack)}` : ` ${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`))
    .join('');
  return `${clock} ${level.toUpperCase().padEnd(5)} ${msg ?? ''}${extra}\n`;
}

/** A logger that discards everything (library use and tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
