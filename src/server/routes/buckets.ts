import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isJsonObject, isScalar, stringifyExact, type JsonValue } from '../../json/index.js';
import { phpToString } from '../../php/index.js';
import { StoreError } from '../../store/store-error.js';
import { StorageJobs, type TableDetail } from '../../store/tables/index.js';
import { timestamp } from '../../store/identifiers.js';
import { sessionOf } from '../auth.js';
import { commaList, queryValue, type Query } from '../http/query.js';
import { sendCachedJson, sendJson, sendNoContent } from '../http/reply.js';
import { pathBucketId, requireWriteAccess, tableCall } from '../errors/table-errors.js';
import { flagParam } from '../storage/table-params.js';
import { bucketToWire, bucketTotals, finishedJobToWire, tableToWire } from '../../store/wire/tables.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

interface BucketParams {
  bucketId: string;
}

/** Keboola's rule for a new bucket's name (its id is `<stage>.c-<name>`). */
const BUCKET_NAME = /^[A-Za-z0-9_-]{1,96}$/;

function invalid(field: string, problem: string): StoreError {
  return StoreError.keboola(KEBOOLA_ERRORS.bucketsValidation, `Invalid parameters - ${field}: ${problem}`, [
    { key: field, message: problem },
  ]);
}

function textField(body: Map<string, JsonValue>, field: string): string | undefined {
  const value = body.get(field);
  if (value === undefined || value === null) return undefined;
  if (!isScalar(value)) throw invalid(field, 'This value should be of type string.');
  return phpToString(value);
}

/** `name`, `stage`, `description` of a bucket to create (JSON or form); `backend` and `displayName` are not gex's to choose. */
function createBucketInput(raw: unknown): { name: string; stage: 'in' | 'out'; description: string } {
  const body = isJsonObject(raw) ? raw : new Map<string, JsonValue>();
  if (raw !== undefined && raw !== null && !isJsonObject(raw))
    throw invalid('body', 'The request body must be a JSON object or a form, e.g. {"name":"shop","stage":"in"}.');
  const name = textField(body, 'name') ?? '';
  if (!BUCKET_NAME.test(name)) {
    throw invalid(
      'name',
      `${name === '' ? 'This value should not be blank.' : 'Only alphanumeric characters, underscores and dashes are allowed (at most 96).'} The bucket id becomes in.c-<name>.`,
    );
  }
  const stage = textField(body, 'stage') || 'in';
  if (stage !== 'in' && stage !== 'out')
    throw invalid('stage', 'The value you selected is not a valid choice: use "in" or "out".');
  const description = textField(body, 'description') ?? '';
  if (description.length > 10_000)
    throw invalid('description', 'This value is too long; it should have at most 10000 characters.');
  return { name, stage, description };
}

/** Whether a table list's `include` asks for its columns' metadata (other values are accepted and ignored). */
export function includesColumnMetadata(query: Query): boolean {
  return commaList(queryValue(query, 'include') ?? '').includes('columnMetadata');
}

/**
 * The bucket objects of the project (or one bucket) with their totals, keyed by id; the tables
 * with their columns' metadata when `columnMetadata`.
 */
export async function bucketObjects(
  request: FastifyRequest,
  bucketId?: string,
  options: { columnMetadata?: boolean } = {},
): Promise<{ buckets: Map<string, JsonValue>; tables: TableDetail[] }> {
  const { tables } = sessionOf(request);
  const list = bucketId === undefined ? await tables.listBuckets() : [await tables.bucket(bucketId)];
  const details = await tables.listTables(bucketId, options);
  const totals = bucketTotals(details);
  return {
    buckets: new Map(list.map((b) => [b.id, bucketToWire(request, b, tables.backend, totals.get(b.id))])),
    tables: details,
  };
}

/** Sends a finished job (202, Keboola's answer to `async=true`) after saving it for the client's poll. */
export async function sendFinishedJob(
  request: FastifyRequest,
  reply: FastifyReply,
  job: { operationName: string; tableId: string | null; operationParams: Record<string, unknown> },
): Promise<FastifyReply> {
  const session = sessionOf(request);
  const id = StorageJobs.newId();
  const body = finishedJobToWire(request, { ...job, id, created: timestamp(), token: session.token });
  await session.storageJobs.record(id, stringifyExact(body));
  return sendJson(reply, 202, body);
}

/** Buckets: list, detail, the bucket's tables, create, delete. */
export function bucketRoutes(app: FastifyInstance): void {
  app.get('/buckets', async (request, reply) =>
    sendCachedJson(
      request,
      reply,
      async () => tableCall(async () => [...(await bucketObjects(request)).buckets.values()]),
      { byHost: true },
    ),
  );

  app.get<{ Params: BucketParams }>('/buckets/:bucketId', async (request, reply) => {
    const id = pathBucketId(request.params.bucketId);
    return sendCachedJson(
      request,
      reply,
      async () => tableCall(async () => (await bucketObjects(request, id)).buckets.get(id)!),
      { byHost: true },
    );
  });

  app.get<{ Params: BucketParams; Querystring: Query }>('/buckets/:bucketId/tables', async (request, reply) => {
    const id = pathBucketId(request.params.bucketId);
    const columnMetadata = includesColumnMetadata(request.query);
    return sendCachedJson(
      request,
      reply,
      async () =>
        tableCall(async () => {
          const { buckets, tables } = await bucketObjects(request, id, { columnMetadata });
          return tables.map((t) => tableToWire(request, t, buckets.get(t.bucketId)!));
        }),
      { byHost: true },
    );
  });

  app.post('/buckets', async (request, reply) => {
    const session = sessionOf(request);
    requireWriteAccess(session);
    const input = createBucketInput(request.body);
    const bucket = await tableCall(() => session.tables.createBucket(input));
    return sendJson(reply, 201, bucketToWire(request, bucket, session.tables.backend));
  });

  app.delete<{ Params: BucketParams; Querystring: Query }>('/buckets/:bucketId', async (request, reply) => {
    const session = sessionOf(request);
    requireWriteAccess(session);
    const id = pathBucketId(request.params.bucketId);
    const force = flagParam(request.query, 'force', false);
    const async = flagParam(request.query, 'async', false);
    await tableCall(() => session.tables.deleteBucket(id, { onlyEmpty: !force }));
    if (!async) return sendNoContent(reply);
    return sendFinishedJob(request, reply, {
      operationName: 'bucketDelete',
      tableId: null,
      operationParams: { params: { idBucket: id, force } },
    });
  });
}
