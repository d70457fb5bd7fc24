import { UserError } from '../common/errors.js';
import { displayId, displayText } from '../common/log-text.js';
import type { SecretMasker } from '../common/secret-masker.js';
import type { DataFolderInput } from '../extractor/data-folder.js';
import type { OpenedStore } from '../store/open-config-store.js';
import type { Row } from '../store/types.js';
import { mergeRowConfiguration, splitConfiguration } from './effective-configuration.js';
import { planRows } from './row-plan.js';
import { componentState } from './stored-state.js';
import { componentImageParameters, decryptedInput, loadConfiguration } from './unit-input.js';

/** One configuration to check, as the runner would give it to the extractor. */
export interface CheckUnit {
  label: string;
  rowId: string | null;
  input: DataFolderInput;
}

export interface StoredUnits {
  units: CheckUnit[];
  warnings: string[];
}

export interface StoredUnitsOptions {
  store: OpenedStore;
  componentId: string;
  configId: string;
  rowIds: string[];
  masker: SecretMasker;
  /**
   * `run`: the rows a run would run (`gex run --dry-run`: disabled rows skipped, a disabled
   * configuration refused unless `force`); `all`: every row, or those of `rowIds` (`gex check`)
   */
  select: 'run' | 'all';
  force?: boolean;
}

/**
 * The inputs a run of a stored configuration gives the extractor, without running it: the root
 * configuration deep-merged under each row's (as the runner merges it), secrets decrypted in
 * memory and registered with the masker, image parameters from the component registry.
 */
export async function storedUnits(options: StoredUnitsOptions): Promise<StoredUnits> {
  const { store, componentId, configId, masker } = options;
  const configuration = await loadConfiguration(store, componentId, configId);
  const warnings: string[] = [];
  if (configuration.isDisabled) {
    if (options.select === 'run' && !options.force) {
      throw new UserError('GEX_CONFIG_DISABLED', `Configuration ${displayId(configId)} is disabled. Enable it in the store, or run it anyway with --force.`);
    }
    if (options.select === 'all') warnings.push(`Configuration ${displayId(configId)} is disabled: a run needs --force`);
  }
  const imageParameters = await componentImageParameters(store, componentId);
  const unitOf = async (row: Row | null, label: string): Promise<CheckUnit> => {
    const node = row ? mergeRowConfiguration(configuration.configuration, row.configuration) : configuration.configuration;
    const state = componentState(row ? row.state : configuration.state);
    return { label, rowId: row?.id ?? null, input: await decryptedInput(store, componentId, splitConfiguration(node), state, imageParameters, masker, row?.id ?? null) };
  };
  if (configuration.rows.length === 0) return { units: [await unitOf(null, `Configuration ${displayId(configId)}`)], warnings };
  // planRows also refuses unknown --row-id values, listing the rows that exist
  const plan = planRows(configuration, options.rowIds);
  const rows = options.select === 'run' || options.rowIds.length > 0 ? plan.run.map((p) => p.row) : configuration.rows;
  if (rows.length === 0) warnings.push('No row would run: every row is disabled');
  const units: CheckUnit[] = [];
  for (const [i, row] of rows.entries()) {
    const disabled = row.isDisabled ? ' (disabled)' : '';
    units.push(await unitOf(row, `Row ${i + 1} of ${rows.length}: ${displayId(row.id)}${row.name ? ` ${displayText(row.name)}` : ''}${disabled}`));
  }
  return { units, warnings };
}
