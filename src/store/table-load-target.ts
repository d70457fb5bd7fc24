import type { LoadOrigin, LoadResult } from './tables/index.js';

/**
 * Where a run's output mapping (runner/output-mapping.ts) loads a table file with its manifest:
 * the embedded store's database (ProjectTables) or a gex server over HTTP (remote/table-transfer.ts).
 * Either leaves the table as it was when the load fails (over HTTP the metadata is set after the
 * import job, as Keboola does: metadata refused there fails the load after its rows are in).
 */
export interface TableLoadTarget {
  /** `origin`: the run that loads (its system metadata, and the provider of the manifest's metadata) */
  load(file: string, manifest: unknown, origin?: LoadOrigin): Promise<LoadResult>;
}
