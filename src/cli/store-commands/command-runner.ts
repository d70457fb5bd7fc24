import { exitCodeOf, UserError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { createLogger } from '../../common/logger.js';

/**
 * Runs a CLI command body: errors become one clear line on stderr and the exit code of the
 * orchestrator contract (1 user error, 2 application error).
 */
export async function runCliAction(
  action: (logger: Logger) => Promise<void>,
  logger: Logger = createLogger({ level: 'warn' }),
): Promise<void> {
  try {
    await action(logger);
  } catch (error) {
    if (error instanceof UserError) process.stderr.write(`Error: ${error.message}\n`);
    else process.stderr.write(`Application error: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = exitCodeOf(error);
  }
}
