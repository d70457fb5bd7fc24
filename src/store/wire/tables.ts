import { fromPlain, isJsonObject, type JsonValue } from '../../json/index.js';
import type { BucketInfo, MetadataItem, TableDetail } from '../tables/index.js';
import { absoluteUri, type RequestOrigin } from './absolute-uri.js';

/**
 * Buckets, tables, their metadata and jobs in Keboola's JSON shapes (docs/storage-api.md#tables),
 * both directions: `…ToWire` builds what gex serve answers, `…FromWire` reads a server's answer
 * (gex's or Keboola's) defensively. Fields Keboola always sends and gex has no counterpart for get
 * their plain value (no aliases, no sharing); an empty list or map is `[]`, as Keboola's PHP encodes it.
 */

const encode = (segment: string): string => encodeURIComponent(segment);

/** A metadata item: `{id, key, value, provider, timestamp}` (the id a string, as Keboola sends it). */
export function storageMetadataToWire(m: MetadataItem): Record<string, unknown> {
  return { id: m.id, key: m.key, value: m.value, provider: m.provider, timestamp: m.timestamp };
}

export const metadataListToWire = (list: readonly MetadataItem[]): Array<Record<string, unknown>> =>
  list.map(storageMetadataToWire);

/**
 * Column metadata by column name, in the table's column order (a Map: a plain object would put
 * names like "0" first); none is `[]` (PHP's empty array).
 */
export function columnMetadataToWire(columns: ReadonlyMap<string, readonly MetadataItem[]>): JsonValue {
  if (columns.size === 0) return [];
  return new Map([...columns].map(([column, items]) => [column, fromPlain(metadataListToWire(items))]));
}

/** Sums over a bucket's tables (rows, bytes, last change); zeros and null for an empty bucket. */
export interface BucketTotals {
  rowsCount: number;
  dataSizeBytes: number;
  lastChangeDate: string | null;
}

export function bucketTotals(tables: readonly TableDetail[]): Map<string, BucketTotals> {
  const totals = new Map<string, BucketTotals>();
  for (const t of tables) {
    const sum = totals.get(t.bucketId) ?? { rowsCount: 0, dataSizeBytes: 0, lastChangeDate: null };
    sum.rowsCount += t.rowsCount;
    sum.dataSizeBytes += t.dataSizeBytes;
    const changed = t.lastChangeDate ?? t.lastImportDate;
    if (sum.lastChangeDate === null || changed > sum.lastChangeDate) sum.lastChangeDate = changed;
    totals.set(t.bucketId, sum);
  }
  return totals;
}

const EMPTY: BucketTotals = { rowsCount: 0, dataSizeBytes: 0, lastChangeDate: null };

export function bucketToWire(
  request: RequestOrigin,
  bucket: BucketInfo,
  backend: string,
  totals: BucketTotals = EMPTY,
): JsonValue {
  const name = bucket.id.slice(bucket.stage.length + 1); // `c-<name>`
  const path = `/v2/storage/buckets/${encode(bucket.id)}`;
  return fromPlain({
    uri: absoluteUri(request, path),
    id: bucket.id,
    name,
    displayName: name.slice(2),
    stage: bucket.stage,
    description: bucket.description,
    tables: absoluteUri(request, `${path}/tables`),
    created: bucket.created,
    lastChangeDate: totals.lastChangeDate,
    isReadOnly: false,
    dataSizeBytes: totals.dataSizeBytes,
    rowsCount: totals.rowsCount,
    isMaintenance: false,
    backend,
    sharing: null,
    hasExternalSchema: false,
    databaseName: null,
    metadata: metadataListToWire(bucket.metadata),
  });
}

export function tableToWire(request: RequestOrigin, table: TableDetail, bucket: JsonValue): JsonValue {
  return fromPlain({
    uri: absoluteUri(request, `/v2/storage/tables/${encode(table.id)}`),
    id: table.id,
    name: table.name,
    displayName: table.name,
    transactional: false,
    primaryKey: table.primaryKey,
    created: table.created,
    lastImportDate: table.lastImportDate,
    // Keboola's lastChangeDate is set by every import; gex's only when rows changed, else the import's
    lastChangeDate: table.lastChangeDate ?? table.lastImportDate,
    rowsCount: table.rowsCount,
    dataSizeBytes: table.dataSizeBytes,
    isAlias: false,
    isAliasable: true,
    isTyped: false,
    tableType: 'table',
    attributes: [],
    columns: table.columns,
    metadata: metadataListToWire(table.metadata),
    // lists read their columns' metadata only when asked (include=columnMetadata)
    ...(table.columnMetadata === null ? {} : { columnMetadata: columnMetadataToWire(table.columnMetadata) }),
    bucket,
  });
}

const text = (value: JsonValue | undefined): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
const get = (value: JsonValue | undefined, key: string): JsonValue | undefined =>
  isJsonObject(value) ? value.get(key) : undefined;

/** Column names as Keboola lists them: strings, or objects with a `name`. */
function names(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.map((c) => (typeof c === 'string' ? c : text(get(c, 'name')))) : [];
}

/** A table of Keboola's list or detail answer. */
export function tableFromWire(wire: JsonValue): TableDetail {
  const id = text(get(wire, 'id'));
  const bucketId = text(get(get(wire, 'bucket'), 'id')) || id.replace(/\.[^.]*$/, '');
  const rows = get(wire, 'rowsCount');
  const size = get(wire, 'dataSizeBytes');
  const lastChange = get(wire, 'lastChangeDate');
  return {
    id,
    bucketId,
    name: text(get(wire, 'name')) || id.slice(bucketId.length + 1),
    columns: names(get(wire, 'columns')),
    primaryKey: names(get(wire, 'primaryKey')),
    rowsCount: typeof rows === 'number' && Number.isFinite(rows) ? rows : 0,
    dataSizeBytes: typeof size === 'number' && Number.isFinite(size) ? size : 0,
    created: text(get(wire, 'created')),
    lastImportDate: text(get(wire, 'lastImportDate')),
    lastChangeDate: typeof lastChange === 'string' ? lastChange : null,
    metadata: metadataListFromWire(get(wire, 'metadata')),
    columnMetadata: columnMetadataFromWire(get(wire, 'columnMetadata')),
  };
}

/** A metadata list as Keboola sends it; anything else is none. */
export function metadataListFromWire(value: JsonValue | undefined): MetadataItem[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((m) =>
    isJsonObject(m)
      ? [
          {
            id: text(get(m, 'id')),
            key: text(get(m, 'key')),
            value: text(get(m, 'value')),
            provider: text(get(m, 'provider')),
            timestamp: text(get(m, 'timestamp')),
          },
        ]
      : [],
  );
}

/** `{column: [items]}` (PHP sends `[]` for none); absent: not read. */
export function columnMetadataFromWire(value: JsonValue | undefined): Map<string, MetadataItem[]> | null {
  if (value === undefined) return null;
  const byColumn = new Map<string, MetadataItem[]>();
  if (isJsonObject(value)) for (const [column, items] of value) byColumn.set(column, metadataListFromWire(items));
  return byColumn;
}

/** A job gex has already finished (every gex operation runs before the request is answered). */
export function finishedJobToWire(
  request: RequestOrigin,
  job: {
    id: number;
    operationName: string;
    tableId: string | null;
    operationParams: Record<string, unknown>;
    created: string;
    token: { id: number; description: string };
  },
): JsonValue {
  return fromPlain({
    id: job.id,
    status: 'success',
    url: absoluteUri(request, `/v2/storage/jobs/${job.id}`),
    tableId: job.tableId,
    operationName: job.operationName,
    operationParams: job.operationParams,
    createdTime: job.created,
    startTime: job.created,
    endTime: job.created,
    runId: null,
    results: null,
    creatorToken: { id: String(job.token.id), description: job.token.description },
    metrics: {
      inCompressed: false,
      inBytes: 0,
      inBytesUncompressed: 0,
      outCompressed: false,
      outBytes: 0,
      outBytesUncompressed: 0,
    },
  });
}

/** A Storage job as a client waits on it: its id, status and error message. */
export interface StorageJob {
  id: string;
  status: string;
  message: string;
}

export function storageJobFromWire(wire: JsonValue): StorageJob {
  const error = get(wire, 'error');
  return {
    id: text(get(wire, 'id')),
    status: text(get(wire, 'status')),
    message: text(get(error, 'message')) || text(error),
  };
}
