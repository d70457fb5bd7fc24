import { UserError } from '../../common/errors.js';
import { excerptId } from '../../common/log-text.js';
import type { Dialect, SqlExecutor } from '../sql/database.js';
import type { Catalog, CatalogBucket } from './catalog.js';
import { postgresSchemaCandidate, quoteIdentifier } from './physical-names.js';

/**
 * Creates a bucket inside the caller's transaction: its PostgreSQL schema (none on SQLite) and its
 * metadata row. The caller has checked that the project has no bucket of that id.
 */
export async function createBucket(
  tx: SqlExecutor,
  dialect: Dialect,
  catalog: Catalog,
  bucket: { id: string; created: string; description?: string },
): Promise<CatalogBucket> {
  let physicalSchema: string | null = null;
  if (dialect.name === 'postgres') {
    // another store or project in this database may own the schema named after the bucket
    for (let attempt = 0; ; attempt++) {
      const candidate = postgresSchemaCandidate(bucket.id, attempt);
      if (!(await tx.get('SELECT 1 AS taken FROM pg_namespace WHERE nspname = ?', [candidate]))) {
        physicalSchema = candidate;
        break;
      }
      if (attempt >= 20)
        throw new UserError(
          'GEX_TABLE_REQUEST_INVALID',
          `No free PostgreSQL schema name for bucket ${excerptId(bucket.id)}.`,
        );
    }
    await tx.run(`CREATE SCHEMA ${quoteIdentifier(physicalSchema)}`);
  }
  const created: CatalogBucket = {
    id: bucket.id,
    physicalSchema,
    created: bucket.created,
    description: bucket.description ?? '',
  };
  await catalog.insertBucket(created);
  return created;
}
