import type { Argv } from 'yargs';
import { withSubCommands } from '../sub-commands.js';
import { tokensCreateCommand } from './create.js';
import { tokensListCommand } from './list.js';
import { tokensRevokeCommand } from './revoke.js';

/** `gex tokens create|list|revoke`: Storage API tokens of the embedded store. */
export function tokensCommand(yargs: Argv): Argv {
  return yargs.command('tokens <action>', 'Manage tokens of the embedded store', (y) =>
    withSubCommands(
      y
        .example('$0 tokens create --description ci --store gex-store.sqlite', 'a token for the CI; printed once')
        .example('$0 tokens create --description dashboard --read-only', 'a token that may only read')
        .example(
          '$0 tokens create --description admin --master',
          'a master token: may also create, list, refresh and delete tokens over HTTP',
        )
        .example(
          '$0 tokens create --description airflow --runner',
          'a runner token: a run elsewhere gets its secrets decrypted by the server (no master key)',
        ),
      [tokensCreateCommand, tokensListCommand, tokensRevokeCommand],
    ).demandCommand(1),
  );
}
