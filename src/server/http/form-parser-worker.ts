import { parentPort } from 'node:worker_threads';
import { FormLimitExceeded, InvalidUtf8, parseFormBytes } from './form-text.js';

/**
 * Parses form bodies off the main thread, so that a large one never delays other requests.
 * Messages: `{ id, bytes }` in; `{ id, value }`, `{ id, limit }` (a FormLimitExceeded
 * message), `{ id, invalidUtf8 }` or `{ id, failure }` out.
 */
parentPort!.on('message', ({ id, bytes }: { id: number; bytes: Uint8Array }) => {
  try {
    parentPort!.postMessage({ id, value: parseFormBytes(bytes) });
  } catch (e) {
    if (e instanceof FormLimitExceeded) parentPort!.postMessage({ id, limit: e.message });
    else if (e instanceof InvalidUtf8) parentPort!.postMessage({ id, invalidUtf8: true });
    else parentPort!.postMessage({ id, failure: (e as Error).message });
  }
});
