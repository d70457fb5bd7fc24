/** Largest request body accepted by default: room for a 4 MB configuration and 4 MB state, JSON-escaped. */
export const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;

/** Time to receive a whole request: a 16 MiB body at ~300 KB/s, yet no connection held forever. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** Largest file uploaded to File Storage by default: 5 GiB. */
export { DEFAULT_FILE_LIMIT } from '../store/files/project-files.js';
