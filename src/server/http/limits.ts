/** Largest request body accepted by default: room for a 4 MB configuration and 4 MB state, JSON-escaped. */
export const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;

/** Time to receive a whole request: a 16 MiB body at ~300 KB/s, yet no connection held forever. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/**
 * Bytes of files all File Storage uploads of a server hold in memory together by default: 32
 * uploads of large files at once (each holds up to 2 MiB: its chunk being filled and the one being
 * written), more of small ones; past it an upload is refused with 503 and Retry-After.
 */
export const DEFAULT_UPLOAD_MEMORY = 64 * 1024 * 1024;

/** Largest file uploaded to File Storage by default: 5 GiB. */
export { DEFAULT_FILE_LIMIT } from '../../store/files/project-files.js';
