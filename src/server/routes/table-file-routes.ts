import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fromPlain } from '../../json/index.js';
import { fileNotFound } from '../../store/files/project-files.js';
import {
  MAX_WHERE_VALUES,
  parseChangedSince,
  parseTableId,
  StorageJobs,
  type TableQuery,
} from '../../store/tables/index.js';
import { timestamp } from '../../store/identifiers.js';
import { absoluteUri } from '../../store/wire/absolute-uri.js';
import { sessionOf, type Session } from '../auth.js';
import type { StorageJobScope } from '../backend.js';
import { BodyFields, numericId } from '../http/body-fields.js';
import { commaList } from '../http/query.js';
import { sendJson } from '../http/reply.js';
import type { StorageJobOutcome, StorageJobRunner, StorageJobWire } from '../../jobs/storage/storage-job-runner.js';
import { exportToFile, importFile, type ImportInput } from '../../jobs/storage/table-file-jobs.js';
import { pathBucketId, pathTableId, requireWriteAccess, tableCall } from '../errors/table-errors.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

const VALIDATION = KEBOOLA_ERRORS.tablesValidation.code;

/** `dataFileId`: an uploaded file of the token's project (checked before the job is created). */
async function dataFile(session: Session, body: BodyFields) {
  const text = body.text('dataFileId', 20)?.trim();
  if (text === undefined || text === '') throw body.invalid('dataFileId', 'This value should not be blank.');
  const id = numericId(text);
  if (id === undefined) throw fileNotFound(text);
  return session.files.uploaded(id);
}

/** Runs a job's work on the project's job scope (its own SQLite connection), closed after. */
async function inJobScope<T>(session: Session, work: (scope: StorageJobScope) => Promise<T>): Promise<T> {
  const scope = session.storageJobScope();
  try {
    return await work(scope);
  } finally {
    await scope.close();
  }
}

/** The work of an import or create job. */
function importJob(session: Session, input: ImportInput): () => Promise<StorageJobOutcome> {
  return () => inJobScope(session, (scope) => importFile(scope.tables, scope.files, input));
}

/** `primaryKey`: `a,b` (Keboola's form) or a list. */
function keyField(body: BodyFields): string[] | undefined {
  const list = body.list('primaryKey', 100);
  if (list === undefined) return undefined;
  return list.flatMap(commaList);
}

function oneCharacter(body: BodyFields, field: string): string | undefined {
  const value = body.text(field, 10);
  return value === undefined || value === '' ? undefined : value;
}

/** Sends the job (202) after recording it; the work runs afterwards in this process. */
async function submit(
  request: FastifyRequest,
  runner: StorageJobRunner,
  job: { operationName: string; tableId: string; operationParams: Record<string, unknown> },
  work: () => Promise<StorageJobOutcome>,
): Promise<StorageJobWire> {
  const session = sessionOf(request);
  const id = StorageJobs.newId();
  return runner.submit(
    session.storageJobs,
    {
      id,
      url: absoluteUri(request, `/v2/storage/jobs/${id}`),
      tableId: job.tableId,
      operationName: job.operationName,
      operationParams: job.operationParams,
      createdTime: timestamp(),
      creatorToken: { id: String(session.token.id), description: session.token.description },
    },
    // its refusals as Keboola words them
    () => tableCall(work),
  );
}

/** The export's filter and columns, from the request body. */
function exportQuery(body: BodyFields): TableQuery {
  const columns = (body.list('columns', 1000) ?? []).flatMap(commaList);
  const whereValues = body.list('whereValues', MAX_WHERE_VALUES) ?? [];
  const operator = body.text('whereOperator', 10)?.trim().toLowerCase() ?? '';
  if (!['', 'eq', 'ne', 'neq'].includes(operator)) throw body.invalid('whereOperator', 'expected eq or ne.');
  const moment = (name: string): Date | undefined => {
    const text = body.text(name, 100);
    if (text === undefined || text.trim() === '') return undefined;
    try {
      return parseChangedSince(text, new Date(), name);
    } catch (error) {
      throw body.invalid(name, (error as Error).message);
    }
  };
  return {
    columns,
    whereColumn: body.text('whereColumn', 1000)?.trim() || undefined,
    whereValues,
    whereOperator: operator === '' || operator === 'eq' ? 'eq' : 'ne',
    changedSince: moment('changedSince'),
    changedUntil: moment('changedUntil'),
    limit: body.integer('limit', 0, Number.MAX_SAFE_INTEGER),
  };
}

/**
 * Tables from and to File Storage (docs/storage-api.md#jobs): tables-async, import-async,
 * export-async, each an asynchronous job. What can be checked before the job starts (the file, the
 * table, the token) is answered at once with the usual error.
 */
export function tableFileRoutes(app: FastifyInstance, runner: StorageJobRunner, fileLimit: number): void {
  app.post<{ Params: { bucketId: string } }>('/buckets/:bucketId/tables-async', async (request, reply) => {
    const session = sessionOf(request);
    requireWriteAccess(session);
    const bucketId = pathBucketId(request.params.bucketId);
    const body = new BodyFields(request.body, VALIDATION);
    const name = body.text('name', 1000)?.trim() ?? '';
    if (name === '') throw body.invalid('name', 'This value should not be blank.');
    const tableId = `${bucketId}.${name}`;
    try {
      parseTableId(tableId, 'name');
    } catch (error) {
      throw body.invalid('name', (error as Error).message);
    }
    await tableCall(() => session.tables.bucket(bucketId));
    const file = await dataFile(session, body);
    const primaryKey = keyField(body) ?? [];
    const columns = body.list('columns', 1000) ?? null;
    const manifest = {
      incremental: false,
      primary_key: primaryKey,
      delimiter: oneCharacter(body, 'delimiter'),
      enclosure: oneCharacter(body, 'enclosure'),
    };
    const job = await submit(
      request,
      runner,
      { operationName: 'tableCreate', tableId, operationParams: { name, dataFileId: file.id, primaryKey } },
      importJob(session, { tableId, file, manifest, columns, withoutHeaders: false, create: true }),
    );
    return sendJson(reply, 202, fromPlain(job));
  });

  app.post<{ Params: { tableId: string } }>('/tables/:tableId/import-async', async (request, reply) => {
    const session = sessionOf(request);
    requireWriteAccess(session);
    const tableId = pathTableId(request.params.tableId);
    await tableCall(() => session.tables.table(tableId));
    const body = new BodyFields(request.body, VALIDATION);
    const file = await dataFile(session, body);
    const incremental = body.flag('incremental', false);
    const withoutHeaders = body.flag('withoutHeaders', false);
    const columns = body.list('columns', 1000) ?? null;
    const deleteWhereColumn = body.text('deleteWhereColumn', 1000)?.trim() || undefined;
    const deleteWhereOperator = body.text('deleteWhereOperator', 10)?.trim().toLowerCase() || 'eq';
    if (deleteWhereOperator !== 'eq' && deleteWhereOperator !== 'ne')
      throw body.invalid('deleteWhereOperator', 'expected eq or ne.');
    const manifest = {
      incremental,
      delimiter: oneCharacter(body, 'delimiter'),
      enclosure: oneCharacter(body, 'enclosure'),
      ...(deleteWhereColumn
        ? {
            delete_where_column: deleteWhereColumn,
            delete_where_values: body.list('deleteWhereValues', 100_000) ?? [],
            delete_where_operator: deleteWhereOperator,
          }
        : {}),
    };
    const primaryKey = keyField(body);
    const job = await submit(
      request,
      runner,
      {
        operationName: 'tableImport',
        tableId,
        operationParams: { source: { fileId: file.id }, params: { incremental, columns: columns ?? [] } },
      },
      importJob(session, { tableId, file, manifest, columns, withoutHeaders, primaryKey, create: false }),
    );
    return sendJson(reply, 202, fromPlain(job));
  });

  app.post<{ Params: { tableId: string } }>('/tables/:tableId/export-async', async (request, reply) => {
    const session = sessionOf(request);
    // an export writes a file: Keboola lets read-only tokens export, and so does gex
    const tableId = pathTableId(request.params.tableId);
    await tableCall(() => session.tables.table(tableId));
    const body = new BodyFields(request.body, VALIDATION);
    const query = exportQuery(body);
    const gzip = body.flag('gzip', false);
    const job = await submit(
      request,
      runner,
      { operationName: 'tableExport', tableId, operationParams: { export: { gzip } } },
      () =>
        inJobScope(session, (scope) =>
          tableCall(() =>
            exportToFile(scope.tables, scope.files, {
              tableId,
              query,
              gzip,
              token: session.token,
              limit: fileLimit,
            }),
          ),
        ),
    );
    return sendJson(reply, 202, fromPlain(job));
  });
}
