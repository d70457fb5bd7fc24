import { fromPlain, isJsonObject, type JsonValue } from '../../json/index.js';
import { FILE_MAX_AGE_DAYS, type DirectUpload, type StoredFile } from '../files/project-files.js';
import { absoluteUri, type RequestOrigin } from './absolute-uri.js';

/**
 * A file of File Storage in Keboola's shape (docs/storage-api.md#files), both directions: what gex
 * serve answers, and what a client reads of a server's answer.
 */

/** Where a file's bytes are uploaded (PUT) and downloaded (GET): the server itself. */
export function fileContentUrl(request: RequestOrigin, id: number): string {
  return absoluteUri(request, `/v2/storage/files/${id}/content`);
}

/** Where a client that uploaded a file straight to the bucket says it is done (POST). */
export function fileCompleteUrl(request: RequestOrigin, id: number): string {
  return absoluteUri(request, `/v2/storage/files/${id}/upload-complete`);
}

export interface FileWireOptions {
  /** answer `uploadParams` (a prepared file): through the server unless `direct` is given */
  upload?: boolean;
  /** the file's direct upload to the bucket (ProjectFiles.directUpload) */
  direct?: DirectUpload;
  /** the file's `url`: a pre-signed GET from the bucket (ProjectFiles.downloadUrl); else the server's content address */
  downloadUrl?: string;
}

/** `uploadParams` of a prepared file: the server's content address, or a direct upload to the bucket. */
function uploadParams(
  request: RequestOrigin,
  file: StoredFile,
  direct: DirectUpload | undefined,
): Record<string, unknown> {
  if (!direct) return { url: fileContentUrl(request, file.id), method: 'PUT' };
  const completeUrl = fileCompleteUrl(request, file.id);
  if (direct.method === 'PUT')
    return { url: direct.url, method: 'PUT', direct: true, expiresAt: direct.expiresAt, completeUrl };
  return {
    method: 'MULTIPART',
    direct: true,
    partSize: direct.partSize,
    parts: direct.parts.map((p) => ({ partNumber: p.partNumber, url: p.url })),
    expiresAt: direct.expiresAt,
    completeUrl,
  };
}

/**
 * A file in Keboola's shape (docs/storage-api.md#files); `provider` "gex" tells it from a cloud
 * bucket. Pre-signed addresses are made by the caller (signing is asynchronous in the SDK) and passed in.
 */
export function fileToWire(request: RequestOrigin, file: StoredFile, options: FileWireOptions = {}): JsonValue {
  const url = options.downloadUrl ?? fileContentUrl(request, file.id);
  return fromPlain({
    id: file.id,
    created: file.created,
    isPublic: false,
    isSliced: false,
    isEncrypted: file.isEncrypted,
    name: file.name,
    url,
    provider: 'gex',
    region: '',
    sizeBytes: file.sizeBytes,
    tags: [...file.tags],
    maxAgeDays: file.expires === null ? null : FILE_MAX_AGE_DAYS,
    runId: null,
    runIds: [],
    creatorToken: { id: file.creatorToken.id, description: file.creatorToken.description },
    ...(options.upload ? { uploadParams: uploadParams(request, file, options.direct) } : {}),
  });
}

/** A file of File Storage as gex reads it from Keboola's file object. */
export interface StorageFile {
  /** numeric, as text */
  id: string;
  /** where its bytes are read (GET with the token) */
  url: string;
  provider: string;
  sizeBytes: number | null;
}

/** A server's file object read defensively; null when it has no numeric id (not a file). */
export function fileFromWire(wire: JsonValue): StorageFile | null {
  const get = (key: string) => (isJsonObject(wire) ? wire.get(key) : undefined);
  const id = get('id');
  const idText = typeof id === 'number' || typeof id === 'string' ? String(id) : '';
  if (!/^\d{1,20}$/.test(idText)) return null;
  const size = get('sizeBytes');
  const url = get('url');
  const provider = get('provider');
  return {
    id: idText,
    url: typeof url === 'string' ? url : '',
    provider: typeof provider === 'string' ? provider : '',
    sizeBytes: typeof size === 'number' && Number.isSafeInteger(size) ? size : null,
  };
}
