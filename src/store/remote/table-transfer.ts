import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UserError } from '../../common/errors.js';
import { displayId, displayText } from '../../common/log-text.js';
import { fromPlain, isJsonObject, type JsonValue } from '../../json/index.js';
import { StoreError } from '../store-error.js';
import type { TableLoadTarget } from '../table-load-target.js';
import {
  checkProvider,
  MAX_METADATA_PER_WRITE,
  parseLoadManifest,
  readCsvHeader,
  SYSTEM_PROVIDER,
  systemMetadata,
  tableIdText,
  type LoadManifest,
  type LoadOrigin,
  type LoadResult,
  type TableQuery,
  USER_PROVIDER,
} from '../tables/index.js';
import { CsvRecordCount } from './csv-record-count.js';
import { previewQuery } from './http-table-source.js';
import { SYSTEM_CLOCK, type Clock } from './retry-budget.js';
import type { StorageApiClient } from './storage-api-client.js';
import { StorageFiles } from './storage-files.js';
import { waitForJob } from './storage-job-wait.js';

export interface TableTransferOptions {
  api: StorageApiClient;
  /** the server's address, for messages */
  url: string;
  /** the waits while a job runs (tests pass a fake one) */
  clock?: Clock;
  /** how long one job is waited for */
  jobTimeoutMs?: number;
}

/** What an export wrote. */
export interface TransferredExport {
  /** data rows (the header not counted) */
  rows: number;
  bytes: number;
}

const text = (value: JsonValue | undefined): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
const field = (value: JsonValue | undefined, key: string): JsonValue | undefined =>
  isJsonObject(value) ? value.get(key) : undefined;

/**
 * Tables to and from a gex server through Keboola's asynchronous calls (docs/storage-api.md#jobs),
 * as the embedded store loads and exports them: a table file is uploaded streamed (File Storage),
 * then created from it (tables-async, with its primary key) or imported into the existing table
 * (import-async: incremental, delete_where), one job per table, waited for; an export is a job
 * writing a file, downloaded streamed. A failed job is a UserError naming the table.
 */
export class TableTransfer implements TableLoadTarget {
  private readonly api: StorageApiClient;
  private readonly url: string;
  private readonly clock: Clock;
  private readonly files: StorageFiles;

  constructor(private readonly options: TableTransferOptions) {
    this.api = options.api;
    this.url = options.url;
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.files = new StorageFiles(options.api, options.url);
  }

  /**
   * Where the stack keeps files: `owner.fileStorageProvider` of tokens/verify — "gex" for a gex
   * server (files on the server itself), Keboola's cloud ("aws", "azure", "gcp") otherwise; '' when not said.
   */
  async fileStorageProvider(): Promise<string> {
    let verified: JsonValue;
    try {
      verified = await this.api.call('GET', 'tokens/verify');
    } catch (error) {
      // an API without token verification names no provider: not a gex server
      if (error instanceof StoreError && error.status === 404) return '';
      throw error;
    }
    return text(field(field(verified, 'owner'), 'fileStorageProvider')).slice(0, 40);
  }

  /**
   * Loads a CSV file with its (legacy) manifest, as ProjectTables.load does on the embedded store:
   * then its metadata (the run's system metadata with an `origin`, the manifest's) through the
   * metadata calls, as Keboola's output mapping sets it after the import job.
   */
  async load(file: string, manifest: unknown, origin?: LoadOrigin): Promise<LoadResult> {
    const label = path.basename(file);
    return this.loadParsed(file, label, parseLoadManifest(manifest, `${label}.manifest`), origin);
  }

  /** Loads `file` (`label` names it in messages) as `manifest` says. */
  async loadParsed(file: string, label: string, manifest: LoadManifest, origin?: LoadOrigin): Promise<LoadResult> {
    const tableId = tableIdText(manifest.destination);
    const { bucketId, name } = manifest.destination;
    const doing = `loading ${displayText(label)} into table ${displayId(tableId)}`;
    const existing = await this.refusedAs(doing, () => this.tableColumns(tableId));
    // what the metadata asks is checked before anything is uploaded: refused, nothing changes
    const provider = manifestProvider(manifest, origin, label);
    if (manifest.columnMetadata.length > 0) {
      const header =
        manifest.columns ??
        (await readCsvHeader(file, { label, delimiter: manifest.delimiter, enclosure: manifest.enclosure }));
      checkMetadataColumns(manifest, new Set([...(existing ?? []), ...header]), label, tableId);
    }
    const bucketCreated = existing ? false : await this.refusedAs(doing, () => this.ensureBucket(bucketId));

    // a file without a header row (manifest columns) gets one: tables-async reads the header
    const header = manifest.columns ? headerLine(manifest.columns, manifest.delimiter, manifest.enclosure) : '';
    const size = (await stat(file)).size + Buffer.byteLength(header);
    // each attempt of the upload (a busy server's 503 is retried) reads the file anew: the last one counts
    let counter = new CsvRecordCount(manifest.enclosure);
    const body = () => {
      counter = new CsvRecordCount(manifest.enclosure);
      const out = new PassThrough();
      if (header) out.write(header);
      void pipeline(createReadStream(file), counter, out).catch((error: Error) => out.destroy(error));
      return out;
    };
    const uploaded = await this.refusedAs(`uploading ${displayText(label)} (${size} bytes)`, () =>
      this.files.upload(label, body, size, ['gex-table-load']),
    );
    try {
      const fields: Record<string, unknown> = {
        dataFileId: uploaded.id,
        delimiter: manifest.delimiter,
        enclosure: manifest.enclosure,
      };
      if (manifest.primaryKey.length > 0) fields.primaryKey = manifest.primaryKey.join(',');
      let path: string;
      if (existing) {
        path = `tables/${encodeURIComponent(tableId)}/import-async`;
        fields.incremental = manifest.incremental ? '1' : '0';
        if (manifest.deleteWhere) {
          fields.deleteWhereColumn = manifest.deleteWhere.column;
          fields.deleteWhereValues = [...manifest.deleteWhere.values];
          fields.deleteWhereOperator = manifest.deleteWhere.operator;
        }
      } else {
        path = `buckets/${encodeURIComponent(bucketId)}/tables-async`;
        fields.name = name;
      }
      // not retried: an import answered but lost on the way back would run twice
      const started = await this.refusedAs(doing, () =>
        this.api.call('POST', path, fromPlain(fields) as Map<string, JsonValue>, undefined, { retry: false }),
      );
      const results = await waitForJob(started, {
        api: this.api,
        clock: this.clock,
        url: this.url,
        doing,
        failure: 'GEX_TABLE_LOAD_REFUSED',
        timeoutMs: this.options.jobTimeoutMs,
      });
      const added = field(results, 'newColumns');
      await this.refusedAs(`setting the metadata of table ${displayId(tableId)} after ${doing}`, () =>
        this.setMetadata(manifest, { origin, provider, tableCreated: !existing, bucketCreated }),
      );
      return {
        tableId,
        // the header row is not a row (a headless file's header was added in front of the count)
        rowsInFile: manifest.columns ? counter.records : Math.max(0, counter.records - 1),
        tableCreated: !existing,
        columnsAdded: existing && Array.isArray(added) ? added.map((c) => text(c)) : [],
      };
    } finally {
      // the file served its one load; the server would expire it in 15 days
      await this.files.delete(uploaded.id).catch(() => undefined);
    }
  }

  /**
   * Exports a query's rows as Keboola's CSV (header, every value quoted) into `out`, streamed:
   * export-async writes a file on the server, which is downloaded and deleted.
   */
  async exportTable(tableId: string, query: TableQuery, out: NodeJS.WritableStream): Promise<TransferredExport> {
    const doing = `exporting table ${displayId(tableId)}`;
    const started = await this.refusedAs(doing, () =>
      this.api.call('POST', `tables/${encodeURIComponent(tableId)}/export-async`, exportFields(query), undefined, {
        retry: false,
      }),
    );
    const results = await waitForJob(started, {
      api: this.api,
      clock: this.clock,
      url: this.url,
      doing,
      failure: 'GEX_STORAGE_API_REFUSED',
      timeoutMs: this.options.jobTimeoutMs,
    });
    const fileId = text(field(field(results, 'file'), 'id'));
    if (!/^\d{1,20}$/.test(fileId))
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The Storage API at ${this.url} finished ${doing} without naming its file; is it a Storage API?`,
      );
    try {
      const file = await this.refusedAs(doing, () => this.files.get(fileId));
      const counter = new CsvRecordCount('"');
      let bytes = 0;
      const counted = new PassThrough();
      counted.on('data', (chunk: Buffer) => (bytes += chunk.length));
      const done = pipeline(counted, counter, async function (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
      });
      await this.refusedAs(doing, () => this.files.download(file, counted));
      await done;
      return { rows: Math.max(0, counter.records - 1), bytes };
    } finally {
      await this.files.delete(fileId).catch(() => undefined);
    }
  }

  /** The table's columns; null when the project has no such table. */
  private async tableColumns(tableId: string): Promise<string[] | null> {
    try {
      const detail = await this.api.call('GET', `tables/${encodeURIComponent(tableId)}`);
      const columns = field(detail, 'columns');
      return Array.isArray(columns) ? columns.map((c) => text(c)) : [];
    } catch (error) {
      if (error instanceof StoreError && error.status === 404) return null;
      throw error;
    }
  }

  /**
   * Keboola's output mapping after a load: `system` metadata of the run (`KBC.createdBy.*` on a
   * bucket or table the load created, `KBC.lastUpdatedBy.*` on the table), then the manifest's
   * metadata with its provider — table items and columns in calls of at most
   * MAX_METADATA_PER_WRITE items and 100 columns (Keboola's own chunk).
   */
  private async setMetadata(
    manifest: LoadManifest,
    load: { origin?: LoadOrigin; provider: string; tableCreated: boolean; bucketCreated: boolean },
  ): Promise<void> {
    const { bucketId } = manifest.destination;
    const tablePath = `tables/${encodeURIComponent(tableIdText(manifest.destination))}/metadata`;
    const post = (where: string, body: Record<string, unknown>) =>
      this.api.call('POST', where, fromPlain(body) as Map<string, JsonValue>);
    const { origin } = load;
    if (origin) {
      if (load.bucketCreated)
        await this.tolerateOldServer(() =>
          post(`buckets/${encodeURIComponent(bucketId)}/metadata`, {
            provider: SYSTEM_PROVIDER,
            metadata: systemMetadata(origin, 'createdBy'),
          }),
        );
      const entries = [
        ...(load.tableCreated ? systemMetadata(origin, 'createdBy') : []),
        ...systemMetadata(origin, 'lastUpdatedBy'),
      ];
      await this.tolerateOldServer(() => post(tablePath, { provider: SYSTEM_PROVIDER, metadata: entries }));
    }
    const columns = [...manifest.columnMetadata];
    if (manifest.metadata.length === 0 && columns.length === 0) return;
    let first = true;
    while (first || columns.length > 0) {
      const body: Record<string, unknown> = { provider: load.provider };
      let items = 0;
      if (first && manifest.metadata.length > 0) {
        body.metadata = manifest.metadata;
        items += manifest.metadata.length;
      }
      const chunk: Array<[string, unknown]> = [];
      while (columns.length > 0 && chunk.length < 100 && items + columns[0].entries.length <= MAX_METADATA_PER_WRITE) {
        const { column, entries } = columns.shift()!;
        items += entries.length;
        // the newer form: positions as keys, the column in each item (any column name survives)
        chunk.push([String(chunk.length), entries.map((e) => ({ columnName: column, ...e }))]);
      }
      if (chunk.length > 0) body.columnsMetadata = Object.fromEntries(chunk);
      if (body.metadata === undefined && body.columnsMetadata === undefined) break;
      await post(tablePath, body);
      first = false;
    }
  }

  /** A gex server before metadata answers 501: its tables keep no system metadata (user metadata fails). */
  private async tolerateOldServer(work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      if (error instanceof StoreError && error.status === 501) return;
      throw error;
    }
  }

  /** The embedded load creates a missing bucket; so does this, through POST /buckets. True when this created it. */
  private async ensureBucket(bucketId: string): Promise<boolean> {
    try {
      await this.api.call('GET', `buckets/${encodeURIComponent(bucketId)}`);
      return false;
    } catch (error) {
      if (!(error instanceof StoreError && error.status === 404)) throw error;
    }
    const [stage, rest] = [bucketId.slice(0, bucketId.indexOf('.')), bucketId.slice(bucketId.indexOf('.') + 1)];
    try {
      await this.api.call(
        'POST',
        'buckets',
        fromPlain({ name: rest.replace(/^c-/, ''), stage }) as Map<string, JsonValue>,
      );
    } catch (error) {
      // created meanwhile by another run: fine
      if (!(error instanceof StoreError && error.status === 400 && (await this.bucketExists(bucketId)))) throw error;
      return false;
    }
    return true;
  }

  private async bucketExists(bucketId: string): Promise<boolean> {
    try {
      await this.api.call('GET', `buckets/${encodeURIComponent(bucketId)}`);
      return true;
    } catch {
      return false;
    }
  }

  /** A store's refusal of a step as one safe line naming the step and the server. */
  private async refusedAs<T>(doing: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      const said = `${displayText(error.message.slice(0, 500))}${error.code ? ` [${displayText(error.code.slice(0, 100))}]` : ''}`;
      throw new UserError(
        error.gexCode === 'GEX_STORE_NOT_FOUND' ||
          error.gexCode === 'GEX_STORE_TOKEN_INVALID' ||
          error.gexCode === 'GEX_STORE_ACCESS_DENIED'
          ? error.gexCode
          : 'GEX_STORAGE_API_REFUSED',
        `The Storage API at ${this.url} refused ${doing} (${error.status}): ${said}`,
        { cause: error },
      );
    }
  }
}

/** The provider of the manifest's metadata: the loading component (checked before anything is sent), else `user`. */
function manifestProvider(manifest: LoadManifest, origin: LoadOrigin | undefined, label: string): string {
  if (!origin) return USER_PROVIDER;
  if (manifest.metadata.length === 0 && manifest.columnMetadata.length === 0) return origin.componentId;
  return checkProvider(origin.componentId, `${displayText(label)}: the component id as the metadata's provider`);
}

/** Column metadata names only columns the table will have (its own and the file's), as the embedded load requires. */
function checkMetadataColumns(manifest: LoadManifest, columns: Set<string>, label: string, tableId: string): void {
  const missing = manifest.columnMetadata.find((c) => !columns.has(c.column));
  if (!missing) return;
  throw new UserError(
    'GEX_TABLE_LOAD_REFUSED',
    `${displayText(label)}: column_metadata names the column ${displayId(missing.column)}, which table ${displayId(tableId)} would not have ` +
      `(its columns: ${[...columns].slice(0, 20).map(displayId).join(', ')}${columns.size > 20 ? ', …' : ''}); nothing was loaded.`,
  );
}

/** A header row in the manifest's dialect: each name enclosed, an enclosure inside doubled. */
function headerLine(columns: readonly string[], delimiter: string, enclosure: string): string {
  return `${columns.map((c) => `${enclosure}${c.split(enclosure).join(enclosure + enclosure)}${enclosure}`).join(delimiter)}\n`;
}

/** export-async's fields from a query (the names data-preview uses; columns as a list). */
function exportFields(query: TableQuery): Map<string, JsonValue> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of previewQuery(query)) {
    if (key === 'columns') continue;
    if (key === 'whereValues[]') ((fields.whereValues ??= []) as string[]).push(value);
    else fields[key] = value;
  }
  if (query.columns && query.columns.length > 0) fields.columns = [...query.columns];
  return fromPlain(fields) as Map<string, JsonValue>;
}
