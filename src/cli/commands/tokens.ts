import type { Argv } from 'yargs';
import { printList } from '../output/list-output.js';
import { UserError } from '../../common/errors.js';
import { displayText, quoteForLog } from '../../common/log-text.js';
import type { JsonValue } from '../../json/index.js';
import { displayLocation } from '../../store/store-location.js';
import type { EmbeddedBackend } from '../../store/embedded/embedded-backend.js';
import type { TokenInfo } from '../../store/types.js';
import { runCliAction } from '../store-commands/command-runner.js';
import { withEmbeddedBackend } from '../store-commands/embedded-only.js';
import { fields, print, say } from '../store-commands/store-command.js';

const storeOption = <T>(c: Argv<T>) =>
  c.option('store', {
    type: 'string',
    describe:
      'the embedded store: a SQLite file or a postgres:// URL ($KBC_URL, else $GEX_STORE, else gex-store.sqlite)',
  }) as Argv<T & { store?: string }>;

const REFUSAL = 'Tokens live in the embedded store';

/** A tokens command's work on the embedded store `store` names (a remote store is refused). */
function onTokens(
  store: string | undefined,
  work: (backend: EmbeddedBackend) => Promise<void>,
  options: { mustExist?: boolean } = {},
): Promise<void> {
  return runCliAction(() => withEmbeddedBackend(store, REFUSAL, work, options));
}

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

/** `gex tokens create|list|revoke`: Storage API tokens of the embedded store. */
export function tokensCommand(yargs: Argv): Argv {
  return yargs.command('tokens <action>', 'Manage tokens of the embedded store', (y) =>
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
      )
      .command(
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
              throw new UserError(
                'GEX_CLI_USAGE',
                'A token needs a description (--description): who or what it is for.',
              );
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
      )
      .command(
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
      )
      .command(
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
      )
      .demandCommand(1),
  );
}
