import { displayId } from '../../../common/log-text.js';
import { fromPlain, type JsonValue } from '../../../json/index.js';
import type { TableDetail } from '../../../store/tables/index.js';
import { fields } from '../../store-commands/store-command.js';

/** A table as `--json` prints it: the fields of Keboola's table detail that gex knows. */
export function tableJson(t: TableDetail): JsonValue {
  return fields({
    id: t.id,
    name: t.name,
    bucket: fields({ id: t.bucketId, stage: t.bucketId.startsWith('out.') ? 'out' : 'in' }),
    columns: t.columns,
    primaryKey: t.primaryKey,
    rowsCount: t.rowsCount,
    created: t.created,
    lastImportDate: t.lastImportDate,
    lastChangeDate: t.lastChangeDate,
    metadata: fromPlain(t.metadata),
    ...(t.columnMetadata === null
      ? {}
      : { columnMetadata: new Map([...t.columnMetadata].map(([c, items]) => [c, fromPlain(items)])) }),
  });
}

/** The first `n` ids of a list, then how many more. */
export function someIds(ids: string[], n = 10): string {
  return ids.slice(0, n).map(displayId).join(', ') + (ids.length > n ? ` and ${ids.length - n} more` : '');
}
