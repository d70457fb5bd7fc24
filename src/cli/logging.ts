import type { Argv } from 'yargs';
import { createLogger, type LogFormat, type Logger, type LogLevel } from '../common/logger.js';
import { ProgressLine } from '../common/progress-line.js';
import { SecretMasker } from '../common/secret-masker.js';

export interface LoggingArgs {
  'log-level': LogLevel;
  'log-format': LogFormat;
}

export function loggingOptions(yargs: Argv): Argv {
  return yargs
    .option('log-level', {
      choices: ['debug', 'info', 'warn', 'error', 'silent'],
      default: (process.env.GEX_LOG_LEVEL as LogLevel) || 'info',
      describe: 'how much to log ($GEX_LOG_LEVEL)',
    })
    .option('log-format', {
      choices: ['text', 'json'],
      default: (process.env.GEX_LOG_FORMAT as LogFormat) || 'text',
      describe: 'plain text lines or JSON lines ($GEX_LOG_FORMAT)',
    });
}

/** Logger, secret masker and (on a terminal) a live progress line for one CLI command. */
export function createCliLogging(args: LoggingArgs, options: { batchStdout?: boolean } = {}): { logger: Logger; masker: SecretMasker; progress: ProgressLine } {
  const masker = new SecretMasker();
  const progress = new ProgressLine(process.stderr);
  const logger = createLogger({ level: args['log-level'], format: args['log-format'], masker, progress, ...options });
  return { logger, masker, progress };
}
