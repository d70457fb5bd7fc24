import path from 'node:path';
import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { LogFile } from '../../common/log-file.js';
import { createLogger, type LogFormat, type Logger, type LogLevel } from '../../common/logger.js';
import { ProgressLine } from '../../common/progress-line.js';
import { SecretMasker } from '../../common/secret-masker.js';
import { defaultDataDir } from '../options/data-dir-default.js';

export interface LoggingArgs {
  'log-level': LogLevel;
  'log-format': LogFormat;
  'log-file'?: string;
}

/** A command's arguments: a command with a data folder names it (a log file must stay out of it). */
type CommandArgs = LoggingArgs & { 'data-dir'?: string };

export function loggingOptions(yargs: Argv): Argv {
  return yargs
    .option('log-level', {
      type: 'string',
      choices: ['debug', 'info', 'warn', 'error', 'silent'],
      default: (process.env.GEX_LOG_LEVEL as LogLevel) || 'info',
      describe: 'how much to log ($GEX_LOG_LEVEL)',
    })
    .option('log-format', {
      type: 'string',
      choices: ['text', 'json'],
      default: (process.env.GEX_LOG_FORMAT as LogFormat) || 'text',
      describe: 'plain text lines or JSON lines ($GEX_LOG_FORMAT)',
    })
    .option('log-file', {
      type: 'string',
      describe: 'gex run, check and serve: also append every log line to this file (masked like the rest)',
    });
}

/** What of a data folder gex clears and writes (in/, out/) and its config.json: never a log file's place. */
function guardedFolders(args: CommandArgs): string[] {
  const dataDir = args['data-dir'] ?? defaultDataDir(process.env).dir;
  return [path.join(dataDir, 'in'), path.join(dataDir, 'out'), path.join(dataDir, 'config.json')];
}

/**
 * The logger of one CLI command, with its options: `stdout` replaces stdout (gex check keeps it
 * for its report). A --log-file that cannot be used ends the command at once with exit code 1,
 * before it has done anything.
 */
export function createCliLogger(
  args: CommandArgs,
  masker: SecretMasker,
  options: { batchStdout?: boolean; progress?: ProgressLine; stdout?: NodeJS.WritableStream } = {},
): Logger {
  let file: LogFile | undefined;
  if (args['log-file'] !== undefined) {
    try {
      file = LogFile.open(args['log-file'], guardedFolders(args));
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      createLogger({ format: args['log-format'], masker }).error(error.message);
      process.exit(1);
    }
  }
  return createLogger({ level: args['log-level'], format: args['log-format'], masker, file, ...options });
}

/** Logger, secret masker and (on a terminal) a live progress line for one CLI command. */
export function createCliLogging(
  args: CommandArgs,
  options: { batchStdout?: boolean } = {},
): { logger: Logger; masker: SecretMasker; progress: ProgressLine } {
  const masker = new SecretMasker();
  const progress = new ProgressLine(process.stderr);
  const logger = createCliLogger(args, masker, { progress, ...options });
  return { logger, masker, progress };
}
