import type { FastifyRequest } from 'fastify';
import { fromPlain, type JsonValue } from '../../json/index.js';
import type { BucketInfo, MetadataItem, TableDetail } from '../../store/tables/index.js';
import { absoluteUri } from '../http/absolute-uri.js';

/**
 * Buckets, tables, their metadata and jobs in Keboola's JSON shapes (docs/storage-api.md#tables).
 * Fields Keboola always sends and gex has no counterpart for get their plain value (no aliases, no
 * sharing); an empty list or map is `[]`, as Keboola's PHP encodes it.
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
  request: FastifyRequest,
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

export function tableToWire(request: FastifyRequest, table: TableDetail, bucket: JsonValue): JsonValue {
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

/** A job gex has already finished (every gex operation runs before the request is answered). */
export function finishedJobToWire(
  request: FastifyRequest,
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
