import { UserError } from '../../common/errors.js';
import { excerptId } from '../../common/log-text.js';
import { fromPlain, isJsonObject, type JsonValue } from '../../json/index.js';
import { fileFromWire, type StorageFile } from '../wire/files.js';
import type { StorageApiClient } from './storage-api-client.js';

/** The most characters of a file name sent to prepare. */
const MAX_NAME = 200;

/**
 * Keboola's File Storage on a gex server (docs/storage-api.md#files): a file prepared, its bytes
 * PUT to the server's own upload address (never to another origin: a Keboola stack's files live
 * in a cloud bucket gex does not write to), read back streamed, deleted. Answers are checked
 * before any of their values becomes a URL.
 */
export class StorageFiles {
  constructor(
    private readonly api: StorageApiClient,
    private readonly url: string,
  ) {}

  /** Uploads `size` bytes of `body` as a new file named `name`; returns the file. */
  async upload(
    name: string,
    body: () => NodeJS.ReadableStream,
    size: number,
    tags: string[] = [],
  ): Promise<StorageFile> {
    const prepared = await this.api.call(
      'POST',
      'files/prepare',
      fromPlain({
        name: name.slice(0, MAX_NAME) || 'table.csv',
        sizeBytes: String(size),
        isPermanent: '0',
        notify: '0',
        ...(tags.length > 0 ? { tags } : {}),
      }) as Map<string, JsonValue>,
    );
    const file = this.fileOf(prepared, 'POST files/prepare');
    if (file.provider !== 'gex')
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The Storage API at ${this.url} keeps files at provider ${excerptId(file.provider || '(none)', 40)}, not on the server itself: gex uploads only to a gex server.`,
      );
    const params = isJsonObject(prepared) ? prepared.get('uploadParams') : undefined;
    const target = isJsonObject(params) ? params.get('url') : undefined;
    if (typeof target !== 'string') throw this.malformed('POST files/prepare', 'a file with uploadParams.url');
    const uploaded = this.fileOf(await this.api.upload(target, body, size), `PUT of file ${file.id}`);
    if (uploaded.id !== file.id || (uploaded.sizeBytes !== null && uploaded.sizeBytes !== size))
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The Storage API at ${this.url} stored file ${file.id} with ${uploaded.sizeBytes} bytes; gex sent ${size}.`,
      );
    return uploaded;
  }

  /** The file's details. */
  async get(fileId: string): Promise<StorageFile> {
    return this.fileOf(await this.api.call('GET', `files/${checkId(fileId)}`), `GET files/${fileId}`);
  }

  /** Streams a file's bytes into `out`; returns how many. */
  async download(file: StorageFile, out: NodeJS.WritableStream): Promise<number> {
    return this.api.download(file.url, out);
  }

  /** Deletes a file (best effort by the caller: an expired file goes anyway). */
  async delete(fileId: string): Promise<void> {
    await this.api.call('DELETE', `files/${checkId(fileId)}`);
  }

  private fileOf(wire: JsonValue, call: string): StorageFile {
    const file = fileFromWire(wire);
    if (file === null) throw this.malformed(call, 'a file object with a numeric id');
    return file;
  }

  private malformed(call: string, expected: string): UserError {
    return new UserError(
      'GEX_STORAGE_API_REFUSED',
      `The Storage API at ${this.url} answered ${call} with something other than ${expected}; is it a Storage API?`,
    );
  }
}

function checkId(fileId: string): string {
  if (!/^\d{1,20}$/.test(fileId))
    throw new UserError('GEX_TABLE_REQUEST_INVALID', `A file id is a number, not ${excerptId(fileId, 40)}.`);
  return fileId;
}
