import type { FastifyRequest } from 'fastify';
import { fromPlain, type JsonValue } from '../../json/index.js';
import { FILE_MAX_AGE_DAYS, type StoredFile } from '../../store/files/project-files.js';
import { absoluteUri } from '../http/absolute-uri.js';

/** Where a file's bytes are uploaded (PUT) and downloaded (GET): the server itself. */
export function fileContentUrl(request: FastifyRequest, id: number): string {
  return absoluteUri(request, `/v2/storage/files/${id}/content`);
}

/** A file in Keboola's shape (docs/storage-api.md#files); `provider` "gex" tells it from a cloud bucket. */
export function fileToWire(request: FastifyRequest, file: StoredFile, options: { upload?: boolean } = {}): JsonValue {
  const url = fileContentUrl(request, file.id);
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
    ...(options.upload ? { uploadParams: { url, method: 'PUT' } } : {}),
  });
}
