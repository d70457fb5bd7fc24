import type { Argv } from 'yargs';
import { printList } from '../../output/list-output.js';
import { displayText } from '../../../common/log-text.js';
import type { JsonValue } from '../../../json/index.js';
import type { TokenInfo } from '../../../store/types.js';
import { print, say } from '../../store-commands/store-command.js';
import { storeOption, onTokens } from './tokens-options.js';

function tokenToJson(t: TokenInfo): JsonValue {
  return new Map<string, JsonValue>([
    ['id', t.id],
    ['description', t.description],
    ['project', t.projectName],
    ['readOnly', t.readOnly],
    ['master', t.canManageTokens],
    ['runner', t.runner],
    ['created', t.created],
  ]);
}

function accessOf(t: TokenInfo): string {
  if (t.readOnly) return 'read-only';
  if (t.canManageTokens) return 'master';
  return t.runner ? 'runner' : 'read-write';
}

/** `gex tokens list` */
export function tokensListCommand(y: Argv): Argv {
  return y.command(
    'list',
    'List the tokens: id, project, access (read-only, read-write, master or runner), created, description (never the token itself: only its hash is stored)',
    (c) =>
      storeOption(c)
        .option('project', { type: 'string', describe: 'only this project' })
        .option('json', { type: 'boolean', default: false }),
    (args) =>
      onTokens(
        args.store,
        async (backend) => {
          const tokens = (await backend.listTokens()).filter(
            (t) => args.project === undefined || t.projectName === args.project,
          );
          if (args.json) return print(tokens.map(tokenToJson));
          if (tokens.length === 0) say('No tokens.');
          printList(
            ['ID', 'PROJECT', 'ACCESS', 'CREATED', 'DESCRIPTION'],
            tokens.map((t) => [
              String(t.id),
              displayText(t.projectName),
              accessOf(t),
              t.created,
              displayText(t.description),
            ]),
          );
        },
        { mustExist: true },
      ),
  );
}
