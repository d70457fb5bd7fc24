import { statSync } from 'node:fs';
import path from 'node:path';
import { ApplicationError } from '../common/errors.js';
import type { RunSummary } from './run-summary.js';

/**
 * The last check of a successful run: every table its summary lists is on disk, with its manifest.
 * A run must never exit 0 while its output is missing (e.g. removed by another process working
 * on the same data folder).
 */
export function verifyTablesOnDisk(dataDir: string, summary: Pick<RunSummary, 'rows'>): void {
  const missing: string[] = [];
  for (const row of summary.rows) {
    if (row.status !== 'success') continue;
    for (const table of row.tables) {
      for (const file of [table.file, `${table.file}.manifest`]) {
        if (!isFile(path.join(dataDir, file))) missing.push(file);
      }
    }
  }
  if (missing.length > 0) {
    throw new ApplicationError(
      'GEX_TABLE_FILES_MISSING',
      `The run finished but ${missing.length === 1 ? 'this output file is' : 'these output files are'} missing from ${dataDir}: ${missing.slice(0, 10).join(', ')}` +
        `${missing.length > 10 ? ` and ${missing.length - 10} more` : ''}. Did another process change the data folder?`,
    );
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
