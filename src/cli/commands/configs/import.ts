import type { Argv } from 'yargs';
import { UserError } from '../../../common/errors.js';
import { displayId, quoteForLog } from '../../../common/log-text.js';
import { sentence } from '../../../common/text.js';
import { isJsonObject, type JsonValue } from '../../../json/index.js';
import type { ConfigStore } from '../../../store/config-store.js';
import { importConfiguration, readImportDocument } from '../../../store/import-configuration.js';
import { StoreError } from '../../../store/store-error.js';
import type { Configuration } from '../../../store/types.js';
import { configurationToWire } from '../../../store/wire/configurations.js';
import { readJsonFile } from '../../input/json-input.js';
import { print, say, storeCommandOptions, withStore } from '../../store-commands/store-command.js';
import { KEBOOLA_ERRORS } from '../../../common/keboola-errors.js';

/**
 * `gex configs import FILE`: a configuration document into the store — as it is, under a new id
 * (`--new-id [ID]`), or in place of the configuration that has its id (`--replace`, one version).
 */

interface ImportArgs {
  file: string;
  'new-id'?: string;
  replace?: boolean;
}

/** The document with its configurationId replaced: `''` drops it, so the store draws one. */
function withConfigurationId(document: JsonValue, id: string): JsonValue {
  if (!isJsonObject(document)) return document;
  const copy = new Map(document);
  if (id === '') copy.delete('configurationId');
  else copy.set('configurationId', id);
  return copy;
}

/** Whether an import failed because the configuration's id is taken (the store's `configurationAlreadyExists`). */
function idTaken(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e instanceof StoreError && e.code === KEBOOLA_ERRORS.configurationAlreadyExists.code) return true;
  }
  return false;
}

/** An import that meets a taken id says what to do next. */
async function importNew(store: ConfigStore, componentId: string, document: JsonValue): Promise<Configuration> {
  try {
    return await importConfiguration(store, componentId, document);
  } catch (error) {
    if (!idTaken(error)) throw error;
    throw new UserError(
      'GEX_STORE_INVALID_REQUEST',
      `${sentence((error as Error).message)} To import it anyway: --new-id gives it a new id (one drawn by the store, or --new-id ID), ` +
        '--replace makes the existing configuration the imported one (one new version; its history is kept).',
      { cause: error },
    );
  }
}

type Outcome = { configuration: Configuration; replaced: boolean; before?: Configuration };

/** `--replace`: the configuration of the document's id becomes the document, as one version; created when there is none. */
async function replace(store: ConfigStore, componentId: string, document: JsonValue): Promise<Outcome> {
  const plan = readImportDocument(document);
  const id = plan.configuration.configurationId;
  if (!id)
    throw new UserError(
      'GEX_CLI_USAGE',
      '--replace replaces the configuration named by the document\'s "configurationId", and this document has none: import it with --new-id instead',
    );
  if (!store.replaceConfiguration) {
    throw new UserError(
      'GEX_CLI_USAGE',
      '--replace needs the embedded store (SQLite or PostgreSQL): a Storage API changes one row per call, so a configuration cannot become the imported one as one version there. ' +
        'Import it under a new id with --new-id, or delete the existing configuration first.',
    );
  }
  let before: Configuration;
  try {
    before = await store.getConfiguration(componentId, id);
  } catch (error) {
    if (!(error instanceof StoreError && error.status === 404)) throw error;
    return { configuration: await importNew(store, componentId, document), replaced: false };
  }
  const configuration = await store.replaceConfiguration(componentId, id, {
    configuration: { ...plan.configuration, changeDescription: 'Replaced by an import from a file' },
    rows: plan.rows,
    rowsSortOrder: plan.rowsSortOrder,
  });
  return { configuration, replaced: true, before };
}

export function configsImportCommand(y: Argv): Argv {
  return y.command(
    'import <file>',
    'Create a configuration (with rows, their order and states) from a JSON document ("-": standard input), all or nothing',
    (c) =>
      storeCommandOptions(c)
        .positional('file', { type: 'string', demandOption: true, describe: 'a JSON file; "-" reads standard input' })
        // a lone "-" reaches a positional intact only as an argument taking one value
        .nargs('file', 1)
        .option('new-id', {
          type: 'string',
          describe:
            "import it as a new configuration under this id, or under one the store draws when no ID follows (the document's configurationId is not used)",
        })
        .option('replace', {
          type: 'boolean',
          describe:
            "make the configuration with the document's id the imported one — name, body, rows, their order and states — as ONE new version (history kept); created when it does not exist. Embedded store only",
        })
        .conflicts('new-id', 'replace')
        .example('$0 configs import shop.json --new-id', 'import a copy next to the configuration it was exported from')
        .example(
          '$0 configs import shop.json --replace',
          'update the stored configuration to the file, as one version',
        ),
    (args) =>
      withStore(args as typeof args & ImportArgs, async (store, a) => {
        const componentId = a['component-id'];
        let document = await readJsonFile(a.file);
        if (a['new-id'] !== undefined) document = withConfigurationId(document, a['new-id']);
        const outcome: Outcome = a.replace
          ? await replace(store, componentId, document)
          : { configuration: await importNew(store, componentId, document), replaced: false };
        const c = outcome.configuration;
        if (a.json) return print(configurationToWire(c));
        if (!outcome.replaced)
          return say(
            `Created configuration ${displayId(c.id)} ${quoteForLog(c.name)} with ${c.rows.length} rows (version ${c.version}).`,
          );
        if (c.version === outcome.before!.version)
          return say(`No change: configuration ${displayId(c.id)} is the imported one already (version ${c.version}).`);
        say(
          `Replaced configuration ${displayId(c.id)} ${quoteForLog(c.name)} with the import: ${c.rows.length} rows, now version ${c.version}.`,
        );
      }),
  );
}
