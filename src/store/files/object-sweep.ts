import type { Database } from '../sql/database.js';
import { anyOf } from '../sql/value-list.js';
import {
  fileKey,
  MAX_KEYS_PER_REQUEST,
  MAX_PRESIGN_SECONDS,
  type ObjectStore,
  type UploadPage,
} from './object-store.js';

/**
 * The sweep of File Storage's bucket: what a failure left behind — an object whose file's row is
 * gone (the row goes first, then the object: a crash or a refused delete between the two leaves
 * the object), a multipart upload begun and never completed or aborted — is removed. Only what
 * gex names is touched: keys that are exactly fileKey(project, file) under the store's prefix;
 * anything else in the bucket is counted and left. An object or upload younger than the grace is
 * left whatever its row says (its row may be committing; a clock between machines may differ).
 *
 * The bucket is read a page at a time (at most MAX_KEYS_PER_REQUEST keys in memory), each page's
 * ids looked up in one query. A prefix belongs to one store: a second store sharing the bucket
 * under the same prefix would have its objects swept away (give each its own prefix).
 */

/** Objects and uploads younger than this are never swept (an upload's row commits before its bytes). */
export const SWEEP_GRACE_MS = 60 * 60 * 1000;

/**
 * A multipart upload of a file still to upload is kept this long: longer than any request gex
 * serves (--request-timeout is at most a day) and any pre-signed address lives (7 days), so one
 * still older was left by a server that died or a client that gave up.
 */
export const STALE_UPLOAD_MS = (MAX_PRESIGN_SECONDS + 24 * 60 * 60) * 1000;

export interface SweepOptions {
  /** the sweep's clock (the grace is counted from it) */
  now?: () => Date;
  graceMs?: number;
  /** keys per list page (tests; default and most MAX_KEYS_PER_REQUEST) */
  pageSize?: number;
  /** asked between pages: true stops the sweep there (a server stopping) */
  stopped?: () => boolean;
}

export interface SweepCounts {
  /** objects under `projects/` looked at */
  objects: number;
  /** objects deleted: no row names them */
  deleted: number;
  /** objects younger than the grace, left whatever their row */
  recent: number;
  /** keys that are not a file's (not ours): left */
  foreign: number;
  /** multipart uploads looked at */
  uploads: number;
  /** multipart uploads aborted: their file is gone, expired or already uploaded, or the upload is stale */
  aborted: number;
  /** whether the sweep stopped before the end (`stopped`) */
  interrupted: boolean;
}

const FILE_KEY = /^projects\/([1-9][0-9]{0,15})\/files\/([1-9][0-9]{0,15})$/;
const UNDER = 'projects';

/** The project and file a key names, when it is exactly a file's key; undefined otherwise. */
export function parseFileKey(key: string): { projectId: number; fileId: number } | undefined {
  const match = FILE_KEY.exec(key);
  if (!match) return undefined;
  const projectId = Number(match[1]);
  const fileId = Number(match[2]);
  if (!Number.isSafeInteger(projectId) || !Number.isSafeInteger(fileId)) return undefined;
  // the one spelling fileKey gives (no leading zeros: the pattern), so a match is a file's key
  return fileKey(projectId, fileId) === key ? { projectId, fileId } : undefined;
}

interface FileRow {
  projectId: number;
  state: string;
  expires: string | null;
}

/** The rows of these file ids, in one query. */
async function rowsOf(db: Database, ids: readonly number[]): Promise<Map<number, FileRow>> {
  const found = new Map<number, FileRow>();
  if (ids.length === 0) return found;
  const condition = anyOf(db.dialect, 'id', ids);
  const rows = await db.all<{ id: unknown; project_id: unknown; state: unknown; expires: unknown }>(
    `SELECT id, project_id, state, expires FROM storage_files WHERE ${condition.sql}`,
    condition.params,
  );
  for (const row of rows) {
    found.set(Number(row.id), {
      projectId: Number(row.project_id),
      state: String(row.state),
      expires: row.expires === null ? null : String(row.expires),
    });
  }
  return found;
}

/** Whether the row is the one that names this key (its project too: ids are global). */
function names(row: FileRow | undefined, projectId: number): row is FileRow {
  return row !== undefined && row.projectId === projectId;
}

function youngerThan(date: Date | undefined, cutoff: number): boolean {
  // a server that gives no date: treated as new, never swept
  return date === undefined || Number.isNaN(date.getTime()) || date.getTime() > cutoff;
}

/** One sweep of `objects` against the rows of `db` (see the module's comment); returns what it did. */
export async function sweepObjects(
  db: Database,
  objects: ObjectStore,
  options: SweepOptions = {},
): Promise<SweepCounts> {
  const now = (options.now ?? (() => new Date()))();
  const cutoff = now.getTime() - (options.graceMs ?? SWEEP_GRACE_MS);
  const pageSize = Math.min(options.pageSize ?? MAX_KEYS_PER_REQUEST, MAX_KEYS_PER_REQUEST);
  const stopped = options.stopped ?? (() => false);
  const counts: SweepCounts = {
    objects: 0,
    deleted: 0,
    recent: 0,
    foreign: 0,
    uploads: 0,
    aborted: 0,
    interrupted: false,
  };

  for (let continuation: string | undefined, first = true; first || continuation; first = false) {
    if (stopped()) return { ...counts, interrupted: true };
    const page = await objects.list(UNDER, continuation, pageSize);
    continuation = page.continuation;
    const candidates: Array<{ key: string; projectId: number; fileId: number }> = [];
    for (const object of page.objects) {
      counts.objects++;
      const parsed = parseFileKey(object.key);
      if (!parsed) counts.foreign++;
      else if (youngerThan(object.lastModified, cutoff)) counts.recent++;
      else candidates.push({ key: object.key, ...parsed });
    }
    const rows = await rowsOf(
      db,
      candidates.map((c) => c.fileId),
    );
    const orphans = candidates.filter((c) => !names(rows.get(c.fileId), c.projectId)).map((c) => c.key);
    if (orphans.length > 0) {
      await objects.deleteMany(orphans);
      counts.deleted += orphans.length;
    }
  }

  for (let continuation: UploadPage['continuation'], first = true; first || continuation; first = false) {
    if (stopped()) return { ...counts, interrupted: true };
    const page = await objects.listMultipart(UNDER, continuation, pageSize);
    continuation = page.continuation;
    const candidates: Array<{
      key: string;
      uploadId: string;
      initiated: Date | undefined;
      projectId: number;
      fileId: number;
    }> = [];
    for (const upload of page.uploads) {
      counts.uploads++;
      const parsed = parseFileKey(upload.key);
      if (parsed && !youngerThan(upload.initiated, cutoff)) candidates.push({ ...upload, ...parsed });
    }
    const rows = await rowsOf(
      db,
      candidates.map((c) => c.fileId),
    );
    const nowText = now.toISOString();
    for (const candidate of candidates) {
      const row = rows.get(candidate.fileId);
      // an upload of a file that is still prepared or uploading may be a slow client's: kept, unless stale
      const live =
        names(row, candidate.projectId) &&
        row.state !== 'uploaded' &&
        (row.expires === null || row.expires > nowText) &&
        youngerThan(candidate.initiated, now.getTime() - STALE_UPLOAD_MS);
      if (live) continue;
      await objects.abortMultipart(candidate.key, candidate.uploadId);
      counts.aborted++;
    }
  }
  return counts;
}
