import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./row-history-child.js', import.meta.url));

export interface RowHistoryFigure {
  rows: number;
  /** false when the import did not finish before the deadline (the other figures are then absent) */
  finished: boolean;
  importMs?: number;
  /** the configuration's version after the import */
  versions?: number;
  /** the SQLite file after close, and its write-ahead log right after the import */
  storeBytes?: number;
  walBytes?: number;
  /** bytes of data in the file (every table and index), page slack excluded */
  storedBytes?: number;
  /** bytes of data one change of one row added (2,000-row configuration only) */
  rowUpdateBytes?: number;
}

/**
 * `gex configs import` of a configuration with `rows` rows into a new SQLite store (issue 23
 * item 5: it was quadratic), each in a process of its own that is stopped at `deadlineMs`.
 */
export async function rowHistoryFigure(
  rows: number,
  options: { update?: boolean; deadlineMs?: number } = {},
): Promise<RowHistoryFigure> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gex-row-history-'));
  try {
    const args = [CHILD, dir, String(rows), ...(options.update ? ['update'] : [])];
    const stdout = await new Promise<string | undefined>((resolve, reject) => {
      execFile(
        process.execPath,
        args,
        { timeout: options.deadlineMs ?? 240_000, maxBuffer: 1024 * 1024 },
        (error, out, err) => {
          if (error && (error as { killed?: boolean }).killed) return resolve(undefined);
          if (error)
            return reject(new Error(`row-history child for ${rows} rows failed: ${err.slice(-1000) || error.message}`));
          resolve(out);
        },
      );
    });
    return stdout === undefined
      ? { rows, finished: false }
      : { ...(JSON.parse(stdout) as RowHistoryFigure), finished: true };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
