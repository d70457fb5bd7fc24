import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { describeBytes } from '../../common/text.js';
import {
  fileNotFound,
  fileTooLarge,
  MAX_DIRECT_PARTS,
  MAX_FILE_NAME,
  MAX_LIST_LIMIT,
  MAX_TAG,
  MAX_TAGS,
  type ProjectFiles,
  type StoredFile,
} from '../../store/files/project-files.js';
import type { CompletedPart } from '../../store/files/object-store.js';
import { isJsonObject, type JsonValue } from '../../json/index.js';
import type { RequestOrigin } from '../../store/wire/absolute-uri.js';
import { StoreError } from '../../store/store-error.js';
import { sessionOf } from '../auth.js';
import { BodyFields, numericId } from '../http/body-fields.js';
import type { ByteBudget } from '../http/byte-budget.js';
import { fileToWire } from '../../store/wire/files.js';
import { queryValue, type Query } from '../http/query.js';
import { sendJson, sendNoContent } from '../http/reply.js';
import { requireWriteAccess } from '../errors/table-errors.js';
import { KEBOOLA_ERRORS } from '../../common/keboola-errors.js';

interface FileParams {
  fileId: string;
}

/** An ETag as a bucket answers a part's PUT: quoted hex mostly; at most this long, of these characters. */
const MAX_ETAG = 200;
const ETAG = /^[A-Za-z0-9"._:+=/-]+$/;

/** A file as GET files/{id} answers it: an uploaded file in an object store by a pre-signed GET from the bucket. */
async function fileAnswer(request: RequestOrigin, files: ProjectFiles, file: StoredFile): Promise<JsonValue> {
  return fileToWire(request, file, { downloadUrl: await files.downloadUrl(file) });
}

function partsInvalid(problem: string): StoreError {
  return new StoreError(400, VALIDATION, `Invalid parameters - parts: ${problem}`, [
    { key: 'parts', message: problem },
  ]);
}

/** A whole number from a JSON number or its text; undefined when it is not one. */
function wholeNumber(value: JsonValue | undefined): number | undefined {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : undefined;
  return text !== undefined && /^\d{1,6}$/.test(text) ? Number(text) : undefined;
}

/**
 * `parts` of an upload-complete body: [{partNumber, etag}], each checked (a number 1..MAX_DIRECT_PARTS
 * once, an ETag of at most MAX_ETAG safe characters); undefined when absent.
 */
function completedParts(raw: unknown): CompletedPart[] | undefined {
  if (raw !== undefined && raw !== null && !isJsonObject(raw))
    throw new StoreError(
      400,
      VALIDATION,
      'Invalid parameters - body: The request body must be a JSON object or a form.',
    );
  const value = isJsonObject(raw) ? raw.get('parts') : undefined;
  if (value === undefined || value === null) return undefined;
  const items = Array.isArray(value) ? value : isJsonObject(value) ? [...value.values()] : undefined;
  if (!items) throw partsInvalid('expected a list of {partNumber, etag}.');
  if (items.length > MAX_DIRECT_PARTS) throw partsInvalid(`at most ${MAX_DIRECT_PARTS} parts, got ${items.length}.`);
  const seen = new Set<number>();
  return items.map((item, index) => {
    if (!isJsonObject(item)) throw partsInvalid(`part ${index + 1} of the list is not an object {partNumber, etag}.`);
    const partNumber = wholeNumber(item.get('partNumber'));
    if (partNumber === undefined || partNumber < 1 || partNumber > MAX_DIRECT_PARTS)
      throw partsInvalid(
        `part ${index + 1} of the list: partNumber must be a whole number from 1 to ${MAX_DIRECT_PARTS}.`,
      );
    if (seen.has(partNumber)) throw partsInvalid(`partNumber ${partNumber} is listed twice.`);
    seen.add(partNumber);
    const etag = item.get('etag');
    if (typeof etag !== 'string' || etag.length === 0 || etag.length > MAX_ETAG || !ETAG.test(etag))
      throw partsInvalid(
        `part ${partNumber}: etag must be the ETag its PUT answered, 1 to ${MAX_ETAG} letters, digits or "._:+=/-.`,
      );
    return { partNumber, etag };
  });
}

const VALIDATION = KEBOOLA_ERRORS.filesValidation.code;

function fileId(text: string): number {
  const id = numericId(text);
  if (id === undefined) throw fileNotFound(text);
  return id;
}

/** `tags[]` of a list query: every value of `tags` and `tags[]`. */
function queryList(query: Query, name: string): string[] {
  return [name, `${name}[]`].flatMap((key) => {
    const value = query[key];
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
  });
}

function queryNumber(query: Query, name: string, fallback: number, max: number): number {
  const text = queryValue(query, name)?.trim();
  if (text === undefined || text === '') return fallback;
  if (!/^\d{1,9}$/.test(text) || Number(text) > max)
    throw new StoreError(400, VALIDATION, `Invalid parameters - ${name}: expected a whole number from 0 to ${max}.`);
  return Number(text);
}

/** The request's Content-Length, when it has a valid one (node refuses a malformed one before fastify). */
function declaredLength(request: FastifyRequest): number | undefined {
  const length = request.headers['content-length'];
  return length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
}

/**
 * Before the body is read: a Content-Length over the limit is refused at once (413), and the
 * connection is closed after the answer so that the body is never read.
 */
function refuseOversized(limit: number) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const length = declaredLength(request);
    if (length !== undefined && length > limit) {
      void reply.header('connection', 'close');
      throw fileTooLarge(limit);
    }
  };
}

/**
 * A refused upload announcing at most this much is read and dropped after the answer (node does
 * so on a connection kept open), so that its client reads the 503 whole rather than a reset, and
 * retries on the same connection; a longer or chunked one is not read: its connection is closed.
 * The same as the largest JSON body a server reads by default.
 */
const DISCARDED_BODY_BYTES = 16 * 1024 * 1024;

/** The answer to an upload that does not fit in the server's upload memory (503, `Retry-After`). */
export function uploadCapacity(budget: ByteBudget): StoreError {
  return StoreError.keboola(
    KEBOOLA_ERRORS.filesUploadCapacity,
    `The server is already holding ${describeBytes(budget.total)} of uploads for other requests (gex serve --max-upload-memory). ` +
      'Retry in a few seconds: the file stays prepared, PUT it again.',
    undefined,
    'GEX_SERVER_BUSY',
  );
}

export interface FileLimits {
  /** the largest file in bytes */
  fileBytes: number;
  /** the bytes of files all uploads together may hold in memory (each takes uploadMemory() at its start) */
  uploads: ByteBudget;
}

/**
 * File Storage (docs/storage-api.md#files): prepare, upload to the server itself, detail, list,
 * download, delete.
 */
export function fileRoutes(app: FastifyInstance, limits: FileLimits): void {
  const limit = limits.fileBytes;
  app.post('/files/prepare', async (request, reply) => {
    const session = sessionOf(request);
    requireWriteAccess(session);
    const body = new BodyFields(request.body, VALIDATION);
    const name = body.text('name', MAX_FILE_NAME)?.trim() ?? '';
    if (name === '') throw body.invalid('name', 'This value should not be blank.');
    if (body.flag('isSliced', false))
      throw body.invalid('isSliced', 'sliced files are not supported by gex: upload the file whole.');
    const tags = body.list('tags', MAX_TAGS) ?? [];
    if (tags.some((t) => t.length > MAX_TAG || t === ''))
      throw body.invalid('tags', `a tag must have 1 to ${MAX_TAG} characters.`);
    // the size the client will upload: with an object store the file is uploaded straight to the bucket
    let sizeBytes: number | undefined;
    if (session.files.direct) {
      sizeBytes = body.integer('sizeBytes', 0, Number.MAX_SAFE_INTEGER);
      if (sizeBytes !== undefined && sizeBytes > limit) throw fileTooLarge(limit);
    }
    const file = await session.files.prepare({
      name,
      isPermanent: body.flag('isPermanent', false),
      isEncrypted: body.flag('isEncrypted', false),
      tags: [...new Set(tags)],
      token: session.token,
      ...(sizeBytes === undefined ? {} : { sizeBytes }),
    });
    const direct = await session.files.directUpload(file);
    return sendJson(reply, 200, fileToWire(request, file, { upload: true, direct }));
  });

  app.post<{ Params: FileParams }>('/files/:fileId/upload-complete', async (request, reply) => {
    const session = sessionOf(request);
    requireWriteAccess(session);
    const id = fileId(request.params.fileId);
    const parts = completedParts(request.body);
    const file = await session.files.complete(id, parts);
    return sendJson(reply, 200, await fileAnswer(request, session.files, file));
  });

  app.get<{ Querystring: Query }>('/files', async (request, reply) => {
    const project = sessionOf(request).files;
    const files = await project.list({
      limit: queryNumber(request.query, 'limit', 100, MAX_LIST_LIMIT),
      offset: queryNumber(request.query, 'offset', 0, 1_000_000_000),
      tags: queryList(request.query, 'tags'),
    });
    return sendJson(reply, 200, await Promise.all(files.map((f) => fileAnswer(request, project, f))));
  });

  app.get<{ Params: FileParams }>('/files/:fileId', async (request, reply) => {
    const files = sessionOf(request).files;
    return sendJson(reply, 200, await fileAnswer(request, files, await files.get(fileId(request.params.fileId))));
  });

  app.delete<{ Params: FileParams }>('/files/:fileId', async (request, reply) => {
    const session = sessionOf(request);
    requireWriteAccess(session);
    await session.files.delete(fileId(request.params.fileId));
    return sendNoContent(reply);
  });

  app.get<{ Params: FileParams }>('/files/:fileId/content', async (request, reply) => {
    const files = sessionOf(request).files;
    const file = await files.uploaded(fileId(request.params.fileId));
    const content = await files.open(file);
    reply.raw.once('close', () => content.destroy());
    return reply
      .code(200)
      .header('content-type', 'application/octet-stream')
      .header('content-length', String(file.sizeBytes ?? 0))
      .send(content);
  });

  // the body is the file's bytes: read here as a stream, never buffered by a content-type parser
  void app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_request, _payload, done) => done(null));
    raw.put<{ Params: FileParams }>(
      '/files/:fileId/content',
      { preParsing: refuseOversized(limit) },
      async (request, reply) => {
        let file: StoredFile;
        const declared = declaredLength(request);
        let discard = false;
        try {
          const session = sessionOf(request);
          requireWriteAccess(session);
          // taken before any byte is read
          const memory = session.files.uploadMemory(declared);
          if (!limits.uploads.tryTake(memory)) {
            discard = declared !== undefined && declared <= DISCARDED_BODY_BYTES;
            throw uploadCapacity(limits.uploads);
          }
          try {
            file = await session.files.upload(fileId(request.params.fileId), request.raw, limit, declared);
          } finally {
            limits.uploads.release(memory);
          }
        } catch (error) {
          // what the client still sends is not read: close the connection after the answer
          if (!discard && !request.raw.readableEnded) void reply.header('connection', 'close');
          throw error;
        }
        return sendJson(reply, 200, await fileAnswer(request, sessionOf(request).files, file));
      },
    );
  });
}
