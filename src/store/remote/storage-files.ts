import { UserError } from '../../common/errors.js';
import { excerptId } from '../../common/log-text.js';
import { isPresignedUrl } from '../../common/url-signature.js';
import { fromPlain, isJsonObject, type JsonObject, type JsonValue } from '../../json/index.js';
import { fileFromWire, type StorageFile } from '../wire/files.js';
import { MAX_PART_BYTES, ObjectTransfer, type UploadedPart } from './object-transfer.js';
import type { StorageApiClient } from './storage-api-client.js';

/** The most characters of a file name sent to prepare. */
const MAX_NAME = 200;

/**
 * Keboola's File Storage on a gex server (docs/storage-api.md#files): a file prepared, its bytes
 * PUT to the server's own upload address — or, when the server keeps its files in a bucket
 * (`uploadParams.direct`), straight to the bucket's pre-signed addresses with no token, then
 * completed on the server — read back streamed, deleted. A Keboola stack's own files live in a
 * cloud bucket gex does not write to. Answers are checked before any of their values becomes a URL.
 */
export class StorageFiles {
  constructor(
    private readonly api: StorageApiClient,
    private readonly url: string,
  ) {
    this.transfer = new ObjectTransfer(api.transferOptions());
  }

  private readonly transfer: ObjectTransfer;

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
    if (!isJsonObject(params)) throw this.malformed('POST files/prepare', 'a file with uploadParams');
    const uploaded =
      params.get('direct') === true
        ? await this.uploadDirect(file.id, params, body, size)
        : this.fileOf(await this.api.upload(this.uploadUrl(params), body, size), `PUT of file ${file.id}`);
    if (uploaded.id !== file.id || uploaded.sizeBytes !== size)
      throw new UserError(
        'GEX_STORAGE_API_REFUSED',
        `The Storage API at ${this.url} stored file ${file.id} with ${uploaded.sizeBytes ?? 'no'} bytes; gex sent ${size}.`,
      );
    return uploaded;
  }

  private uploadUrl(params: JsonObject): string {
    const target = params.get('url');
    if (typeof target !== 'string') throw this.malformed('POST files/prepare', 'a file with uploadParams.url');
    return target;
  }

  /**
   * The bytes straight into the server's bucket at the pre-signed addresses of `params` (one PUT,
   * or the parts of a multipart upload), with no token; then the server is told, on its own
   * address, and checks the object's size before the file counts as uploaded.
   */
  private async uploadDirect(
    fileId: string,
    params: JsonObject,
    body: () => NodeJS.ReadableStream,
    size: number,
  ): Promise<StorageFile> {
    const method = params.get('method');
    let parts: UploadedPart[] | undefined;
    if (method === 'PUT') {
      await this.transfer.put(this.uploadUrl(params), body, size);
    } else if (method === 'MULTIPART') {
      const partSize = params.get('partSize');
      const listed = params.get('parts');
      if (
        typeof partSize !== 'number' ||
        !Number.isSafeInteger(partSize) ||
        partSize < 1 ||
        partSize > MAX_PART_BYTES ||
        !Array.isArray(listed)
      )
        throw this.malformed(
          'POST files/prepare',
          `uploadParams with a partSize of 1 to ${MAX_PART_BYTES} bytes and parts`,
        );
      const presigned = listed.map((part, index) => {
        const url = isJsonObject(part) ? part.get('url') : undefined;
        const partNumber = isJsonObject(part) ? part.get('partNumber') : undefined;
        if (partNumber !== index + 1 || typeof url !== 'string')
          throw this.malformed('POST files/prepare', 'uploadParams.parts numbered 1, 2, … each with a url');
        return { partNumber, url };
      });
      parts = await this.transfer.putParts(presigned, partSize, body(), size);
    } else {
      throw this.malformed('POST files/prepare', 'uploadParams of method PUT or MULTIPART');
    }
    const completed = await this.api.call(
      'POST',
      `files/${checkId(fileId)}/upload-complete`,
      parts
        ? (fromPlain({ parts: parts.map((p) => ({ partNumber: p.partNumber, etag: p.etag })) }) as JsonObject)
        : undefined,
    );
    return this.fileOf(completed, `POST files/${fileId}/upload-complete`);
  }

  /** The file's details. */
  async get(fileId: string): Promise<StorageFile> {
    return this.fileOf(await this.api.call('GET', `files/${checkId(fileId)}`), `GET files/${fileId}`);
  }

  /** Streams a file's bytes into `out`; returns how many. */
  async download(file: StorageFile, out: NodeJS.WritableStream): Promise<number> {
    // a gex server with its files in a bucket gives a pre-signed address there: no token goes with it
    if (file.provider === 'gex' && !this.api.isOwnAddress(file.url) && isPresignedUrl(file.url))
      return this.transfer.download(file.url, out);
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
