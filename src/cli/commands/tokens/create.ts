import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { quoteForLog } from '../../../common/log-text.js';
import { storeOption, onTokens } from './tokens-options.js';

/** `gex tokens create` */
export function tokensCreateCommand(y: Argv): Argv {
  return y.command(
    'create',
    'Create a token and print it (only a hash is stored; it is shown this once)',
    (c) =>
      storeOption(c)
        .option('description', { type: 'string', demandOption: true, describe: 'who or what the token is for' })
        .option('read-only', {
          type: 'boolean',
          default: false,
          describe: 'may read configurations but not change them',
        })
        .option('master', {
          type: 'boolean',
          default: false,
          describe: "a master token: may also manage the project's tokens over HTTP (Keboola's token API)",
        })
        .option('runner', {
          type: 'boolean',
          default: false,
          describe:
            "a runner token: may also receive the project's secrets decrypted, so that `gex run` against the server needs no master key (read-write, never master)",
        })
        .option('project', {
          type: 'string',
          describe: 'project the token belongs to (created if new; default "default")',
        }),
    (args) =>
      onTokens(args.store, async (backend) => {
        if (args.description.trim() === '')
          throw new UserError('GEX_CLI_USAGE', 'A token needs a description (--description): who or what it is for.');
        if (args.master && args['read-only'])
          throw new UserError(
            'GEX_CLI_USAGE',
            '--master and --read-only exclude each other: a master token creates and deletes tokens.',
          );
        if (args.runner && (args.master || args['read-only']))
          throw new UserError(
            'GEX_CLI_USAGE',
            `--runner and ${args.master ? '--master' : '--read-only'} exclude each other: ${args.master ? 'a master token manages tokens and never sees a secret, a runner token runs' : 'a run saves state and loads tables'}.`,
          );
        const { token, info } = await backend.createToken({
          description: args.description,
          readOnly: args['read-only'],
          canManageTokens: args.master,
          runner: args.runner,
          project: args.project,
        });
        process.stdout.write(`${token}\n`);
        const kind = info.readOnly
          ? ' (read-only)'
          : info.canManageTokens
            ? ' (master)'
            : info.runner
              ? " (runner: receives the project's secrets decrypted)"
              : '';
        process.stderr.write(
          `Token ${info.id} ${quoteForLog(info.description)} of project ${quoteForLog(info.projectName)}${kind} created. Store it now: it is not shown again.\n`,
        );
      }),
  );
}
