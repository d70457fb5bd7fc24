import { openDatabase } from '../../src/store/open-store.js';
import type { Database } from '../../src/store/sql/database.js';
import { TEST_KEY } from './store.js';

/** What a store holds, counted the same on SQLite and PostgreSQL and whatever its schema. */
export interface StoredData {
  /** table rows, in every table */
  records: number;
  /** characters of every value of every table (text as stored, numbers as text) */
  bytes: number;
}

/**
 * Counts every table of the store at `location` (its data, not its pages: free space and a
 * database's row versions left for vacuum are not counted), so that what a change adds can be
 * measured by difference — before and after a schema change alike.
 */
export async function storedData(location: string): Promise<StoredData> {
  const db = await openDatabase(location, TEST_KEY);
  try {
    let records = 0;
    let bytes = 0;
    for (const [table, columns] of await tableColumns(db)) {
      const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
      const sizes = columns.map((c) => `coalesce(length(CAST(${quote(c)} AS TEXT)), 0)`).join(' + ');
      const row = await db.get<{ n: number | string; b: number | string | null }>(
        `SELECT count(*) AS n, sum(${sizes}) AS b FROM ${quote(table)}`,
      );
      records += Number(row?.n ?? 0);
      bytes += Number(row?.b ?? 0);
    }
    return { records, bytes };
  } finally {
    await db.close();
  }
}

async function tableColumns(db: Database): Promise<Map<string, string[]>> {
  const rows =
    db.dialect.name === 'sqlite'
      ? await db.all<{ t: string; c: string }>(
          "SELECT m.name AS t, p.name AS c FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY m.name, p.cid",
        )
      : await db.all<{ t: string; c: string }>(
          'SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position',
        );
  const tables = new Map<string, string[]>();
  for (const { t, c } of rows) tables.set(t, [...(tables.get(t) ?? []), c]);
  return tables;
}
