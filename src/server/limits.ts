/** Largest request body accepted by default: room for a 4 MB configuration and 4 MB state, JSON-escaped. */
export const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;
