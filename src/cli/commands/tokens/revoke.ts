import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayText, quoteForLog } from '../../../common/log-text.js';
import { displayLocation } from '../../../store/store-location.js';
import { fields, print, say } from '../../store-commands/store-command.js';
import { storeOption, onTokens } from './tokens-options.js';

/** `gex tokens revoke <id>` */
export function tokensRevokeCommand(y: Argv): Argv {
  return y.command(
    'revoke <id>',
    'Revoke a token by its id (see "tokens list"): requests with it are refused from then on',
    (c) =>
      storeOption(c)
        .positional('id', { type: 'string', demandOption: true })
        .option('json', { type: 'boolean', default: false }),
    (args) =>
      onTokens(
        args.store,
        async (backend) => {
          if (!/^[1-9]\d{0,15}$/.test(args.id))
            throw new UserError(
              'GEX_CLI_USAGE',
              `A token id is a number as "gex tokens list" shows it, got ${quoteForLog(args.id.slice(0, 100))}`,
            );
          if (!(await backend.revokeToken(Number(args.id))))
            throw new UserError(
              'GEX_STORE_NOT_FOUND',
              `No token ${args.id} in the store ${displayText(displayLocation(backend.location))} ("gex tokens list" shows them)`,
            );
          if (args.json) return print(fields({ id: Number(args.id), revoked: true }));
          say(`Token ${args.id} revoked.`);
        },
        { mustExist: true },
      ),
  );
}
