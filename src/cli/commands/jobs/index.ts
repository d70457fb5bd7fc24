import type { Argv } from 'yargs';
import { withSubCommands } from '../sub-commands.js';
import { jobsKillCommand } from './kill.js';
import { jobsListCommand } from './list.js';
import { jobsLogCommand } from './log.js';
import { jobsRunCommand } from './run.js';
import { jobsShowCommand } from './show.js';

/**
 * `gex jobs run|list|show|log|kill`: the queue jobs of a project, on the embedded store or through a
 * server's Queue API (an http(s) store), with the same output and exit codes (docs/jobs.md).
 */
export function jobsCommand(yargs: Argv): Argv {
  return yargs.command(
    'jobs <action>',
    'Queue jobs: run a configuration on request, list, show, follow and kill jobs (docs/jobs.md)',
    (y) =>
      withSubCommands(
        y
          .option('store', {
            type: 'string',
            describe:
              'the embedded store (a SQLite file or a postgres:// URL) or the http(s) address of a gex serve or Keboola stack ($KBC_URL, else $GEX_STORE, else gex-store.sqlite)',
          })
          .option('token', { type: 'string', describe: 'Storage API token for a server ($KBC_TOKEN)' })
          .option('project', { type: 'string', describe: 'project of the embedded store (default: "default")' })
          .option('json', { type: 'boolean', default: false, describe: "print jobs as the Queue API's JSON" }),
        [jobsRunCommand, jobsListCommand, jobsShowCommand, jobsLogCommand, jobsKillCommand],
      ).demandCommand(1, 'Name an action: run, list, show, log or kill'),
  );
}
