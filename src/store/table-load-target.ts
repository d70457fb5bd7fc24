import type { LoadResult } from './tables/index.js';

/**
 * Where a run's output mapping (runner/output-mapping.ts) loads a table file with its manifest:
 * the embedded store's database (ProjectTables) or a gex server over HTTP (remote/table-transfer.ts).
 * Either leaves the table as it was when the load fails.
 */
export interface TableLoadTarget {
  load(file: string, manifest: unknown): Promise<LoadResult>;
}
