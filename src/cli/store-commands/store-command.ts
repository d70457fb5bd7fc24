import type { Argv } from 'yargs';
import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
import { prettyExact, type JsonObject, type JsonValue } from '../../json/index.js';
import type { ConfigStore } from '../../store/config-store.js';
import type { OpenedStore } from '../../store/open-config-store.js';
import { StoreError } from '../../store/store-error.js';
import { runCliAction } from './command-runner.js';
import { splitIdList } from '../options/id-list.js';
import { componentOption, openStoreFromArgs, storeOptions, type ComponentArgs } from '../options/store-options.js';

/** What the store commands (configs, rows, state) share: options, opening the store, output, errors. */

export interface JsonArg {
  json: boolean;
}

export type StoreCommandArgs = ComponentArgs & JsonArg;

/** `--store`, `--token`, `--project`, `--component-id`, `--json`. */
export const storeCommandOptions = <T>(y: Argv<T>) =>
  componentOption(storeOptions(y)).option('json', { type: 'boolean', default: false, describe: 'print JSON' }) as Argv<
    T & StoreCommandArgs
  >;

/** `--row-id` taking a comma list and/or repeated, as `gex run` does. */
export const rowIdsOption = <T>(y: Argv<T>, describe: string) =>
  y.option('row-id', {
    type: 'string',
    array: true,
    describe: `${describe} (repeatable or a comma list)`,
    coerce: splitIdList,
  }) as Argv<T & { 'row-id'?: string[] }>;

export function print(value: JsonValue): void {
  process.stdout.write(`${prettyExact(value)}\n`);
}

/** A small JSON object for `--json` output, keys in the order given. */
export function fields(values: Record<string, JsonValue>): JsonObject {
  return new Map(Object.entries(values));
}

export function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function positiveInt(value: unknown, name: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UserError('GEX_CLI_USAGE', `${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}

interface Target {
  id?: unknown;
  'config-id'?: unknown;
  'row-id'?: unknown;
  'component-id': string;
}

/** A 404 of the store as one safe line naming what was looked for and where. */
function notFound(error: StoreError, args: Target, location: string): UserError {
  const configId = args['config-id'] ?? args.id;
  const rows = splitIdList(args['row-id']);
  const what = [
    rows.length ? `row ${rows.map(displayId).join(', ')} of ` : '',
    configId === undefined ? '' : `configuration ${displayId(String(configId))} of `,
    `component ${displayId(args['component-id'])}`,
  ].join('');
  return new UserError(
    error.gexCode,
    `${displayText(error.message)} (looked for ${what} in the store ${displayText(location)})`,
    { cause: error },
  );
}

type Work<A> = (store: ConfigStore, args: A, opened: OpenedStore) => Promise<void>;

/** Runs `work` with the store the arguments name and closes it. `mustExist`: the command only reads. */
export function withStore<A extends ComponentArgs & Target>(
  args: A,
  work: Work<A>,
  options: { mustExist?: boolean } = {},
): Promise<void> {
  return runCliAction(async (logger) => {
    const opened = await openStoreFromArgs(args, logger, options);
    try {
      await work(opened.store, args, opened);
    } catch (error) {
      if (error instanceof StoreError && error.status === 404) throw notFound(error, args, opened.location);
      throw error;
    } finally {
      await opened.close();
    }
  });
}

/** For commands that only read: a store that does not exist is an error, and none is created. */
export function withExistingStore<A extends ComponentArgs & Target>(args: A, work: Work<A>): Promise<void> {
  return withStore(args, work, { mustExist: true });
}
