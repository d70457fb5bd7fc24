import type { Argv } from 'yargs';
import { printList } from '../output/list-output.js';
import { displayId, displayText } from '../../common/log-text.js';
import type { Component } from '../../store/types.js';
import { componentToWire } from '../../store/wire/components.js';
import { runCliAction } from '../store-commands/command-runner.js';
import { withEmbeddedBackend } from '../store-commands/embedded-only.js';
import { readJsonFile } from '../input/json-input.js';
import { print, say, withExistingStore } from '../store-commands/store-command.js';
import { storeOptions } from '../options/store-options.js';

const jsonOption = <T>(c: Argv<T>) =>
  c.option('json', { type: 'boolean', default: false, describe: 'print JSON' }) as Argv<T & { json: boolean }>;

function componentCells(c: Component, configurations?: number): string[] {
  return [
    displayId(c.id),
    displayText(c.type),
    displayText(c.name),
    ...(configurations === undefined ? [] : [`${configurations} configurations`]),
  ];
}

/** `gex components import|list|show`: the component registry. */
export function componentsCommand(yargs: Argv): Argv {
  return yargs.command(
    'components <action>',
    'Manage the component registry of the embedded store, or list the components of any store',
    (y) =>
      y
        .command(
          'import <file>',
          'Register the components of a JSON file (an array of components as the Keboola API lists them)',
          (c) =>
            c
              .positional('file', {
                type: 'string',
                demandOption: true,
                describe: 'a JSON file; "-" reads standard input',
              })
              // a lone "-" reaches a positional intact only as an argument taking one value
              .nargs('file', 1)
              .option('store', {
                type: 'string',
                describe:
                  'the embedded store: a SQLite file or a postgres:// URL ($KBC_URL, else $GEX_STORE, else gex-store.sqlite)',
              }) as Argv<{ file: string; store?: string }>,
          (args) =>
            runCliAction(async () => {
              const list = await readJsonFile(args.file);
              await withEmbeddedBackend(
                args.store,
                'Components are registered in the embedded store',
                async (backend) => {
                  const ids = await backend.importComponents(list);
                  say(
                    `Registered ${ids.length} component${ids.length === 1 ? '' : 's'}: ${ids.map(displayId).join(', ')}`,
                  );
                },
              );
            }),
        )
        .command(
          'list',
          'List the components: every registered one on the embedded store; on a Storage API those that have configurations (what its API lists)',
          (c) => jsonOption(storeOptions(c)),
          (args) =>
            withExistingStore({ ...args, 'component-id': '' }, async (store, _args, opened) => {
              const listed = await store.listComponents();
              const counts = new Map(listed.map((l) => [l.component.id, l.configurations.length]));
              const components =
                opened.kind === 'remote' ? listed.map((l) => l.component) : await opened.backend.listComponents();
              if (args.json) return print(components.map((c) => componentToWire(c)));
              if (components.length === 0) say('No components.');
              printList(
                ['ID', 'TYPE', 'NAME', 'CONFIGURATIONS'],
                components.map((c) => componentCells(c, counts.get(c.id) ?? 0)),
              );
            }),
        )
        .command(
          'show <id>',
          'Show a component (JSON with --json: its whole definition, secrets encrypted)',
          (c) => jsonOption(storeOptions(c)).positional('id', { type: 'string', demandOption: true }),
          (args) =>
            withExistingStore(
              { store: args.store, token: args.token, project: args.project, 'component-id': args.id },
              async (store) => {
                const component = await store.getComponent(args.id);
                if (args.json) return print(componentToWire(component));
                say(componentCells(component).join('\t'));
                const description = componentToWire(component).get('description');
                if (typeof description === 'string' && description) say(displayText(description));
              },
            ),
        )
        .demandCommand(1),
  );
}
