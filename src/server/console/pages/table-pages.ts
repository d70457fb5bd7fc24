import type { FastifyInstance, FastifyReply } from 'fastify';
import { describeBytes, groupThousands } from '../../../common/text.js';
import type { TableQuery } from '../../../store/tables/index.js';
import { pathTableId, tableCall } from '../../errors/table-errors.js';
import { ByteBudget } from '../../http/byte-budget.js';
import type { PreviewBounds } from '../../routes/tables.js';
import { DEFAULT_PREVIEW_MAX_BYTES, DEFAULT_PREVIEW_TOTAL_BYTES, preparePreview } from '../../storage/table-preview.js';
import type { ServerBackend } from '../../backend.js';
import { renderPage, userOf } from '../console-context.js';

/** rows a table's page shows (the data preview's default) */
export const PREVIEW_ROWS = 100;

type Query = Record<string, string | undefined>;

/** A cell as the JSON preview encodes it (long values cut, flagged). */
interface PreviewCell {
  value: string;
  isTruncated: boolean;
}

/** Bytes as people read them: 1.2 MiB, 340 KiB, 12 bytes. */
function size(bytes: number): string {
  if (bytes < 1024) return describeBytes(bytes);
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 10 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

async function collect(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Aborted when the client goes before the answer is sent (as the data-preview route does). */
function goneSignal(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return gone.signal;
}

/**
 * The Tables section: the project's buckets and tables (one list call, as the Storage API's), and a
 * table's columns and first rows through the data preview's code and byte bounds, with a filter on
 * one column's value (the preview's `whereColumn`/`whereValues`).
 */
export function tablePages(
  app: FastifyInstance,
  pages: { backend: Pick<ServerBackend, 'tables'>; previews?: PreviewBounds },
): void {
  const { backend } = pages;
  // the server's preview bounds, shared with the Storage API's (the default ones when run alone)
  const bounds = pages.previews ?? {
    maxBytes: DEFAULT_PREVIEW_MAX_BYTES,
    budget: new ByteBudget(DEFAULT_PREVIEW_TOTAL_BYTES),
  };

  app.get('/tables', async (request, reply) => {
    const tables = backend.tables(userOf(request).token);
    const [buckets, details] = await tableCall(async () => Promise.all([tables.listBuckets(), tables.listTables()]));
    const byBucket = new Map(buckets.map((b) => [b.id, [] as typeof details]));
    for (const t of details) byBucket.get(t.bucketId)?.push(t);
    return renderPage(request, reply, 'tables', 'Tables', {
      title: 'Tables',
      buckets: buckets.map((b) => ({
        id: b.id,
        stage: b.stage,
        description: b.description,
        tables: (byBucket.get(b.id) ?? []).map((t) => ({
          id: t.id,
          name: t.name,
          rows: groupThousands(t.rowsCount),
          size: size(t.dataSizeBytes),
          lastImport: t.lastImportDate,
        })),
      })),
    });
  });

  app.get<{ Params: { tableId: string }; Querystring: Query }>('/tables/:tableId', async (request, reply) => {
    const tables = backend.tables(userOf(request).token);
    const id = pathTableId(request.params.tableId);
    const table = await tableCall(() => tables.table(id));
    const column = request.query.column?.slice(0, 255) || undefined;
    const value = request.query.value ?? '';
    const known = column !== undefined && table.columns.includes(column);
    const query: TableQuery = {
      limit: PREVIEW_ROWS,
      ...(known ? { whereColumn: column, whereValues: [value], whereOperator: 'eq' as const } : {}),
    };
    const preview = await tableCall(() =>
      preparePreview({
        tables,
        tableId: id,
        query,
        format: 'json',
        maxBytes: bounds.maxBytes,
        budget: bounds.budget,
        signal: goneSignal(reply),
      }),
    );
    const read = JSON.parse((await collect(preview.body)).toString('utf8')) as {
      columns: string[];
      rows: PreviewCell[][];
    };
    return renderPage(request, reply, 'table', 'Tables', {
      title: table.id,
      table: {
        id: table.id,
        bucketId: table.bucketId,
        name: table.name,
        columns: table.columns,
        primaryKey: table.primaryKey,
        rows: groupThousands(table.rowsCount),
        size: size(table.dataSizeBytes),
        lastImport: table.lastImportDate,
      },
      filter: { column: known ? column : undefined, value: known ? value : '' },
      problem: column !== undefined && !known ? `The table has no column ${column}.` : undefined,
      preview: { columns: read.columns, rows: read.rows.map((r) => r.map((c) => [c.value, c.isTruncated])) },
      limit: PREVIEW_ROWS,
    });
  });
}
