import type { SqlExecutor, StoreSchema } from './database.js';

export type { StoreSchema } from './database.js';

/** The schema gex's tables get when the connection names no schema of its own. */
export const DEFAULT_STORE_SCHEMA = 'gex';

/** Schemas that are never a store's own: shared, or PostgreSQL's. */
function canOwn(schema: string | null | undefined): schema is string {
  return (
    !!schema &&
    schema !== 'public' &&
    schema !== '$user' &&
    schema !== 'information_schema' &&
    !schema.startsWith('pg_')
  );
}

/**
 * The first schema a `search_path` setting names (`"$user", public` → `$user`): entries are
 * separated by commas; a quoted one keeps its case and doubled quotes, an unquoted one is folded
 * to lower case, as PostgreSQL reads them.
 */
export function firstSearchPathEntry(searchPath: string): string | null {
  const text = searchPath.trim();
  if (text.startsWith('"')) {
    let name = '';
    for (let i = 1; i < text.length; i++) {
      if (text[i] !== '"') name += text[i];
      else if (text[i + 1] === '"') name += text[++i];
      else return name;
    }
    return null;
  }
  const entry = text.split(',')[0].trim();
  return entry === '' ? null : entry.toLowerCase();
}

/**
 * The store's schema from what the URL's own session selects: its current schema unless that is
 * `public` (or none, or PostgreSQL's); else the first schema the search_path names, when it may
 * be the store's own and does not exist yet; else `gex`. So a URL with `search_path=<schema>`
 * keeps the store there (several stores in one database), and a plain URL puts it in `gex`.
 */
export function chooseStoreSchema(currentSchema: string | null, searchPath: string): StoreSchema {
  const named = firstSearchPathEntry(searchPath);
  const name = canOwn(currentSchema) ? currentSchema : canOwn(named) ? named : DEFAULT_STORE_SCHEMA;
  return { name, legacy: currentSchema };
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * `url` whose sessions have `schema` alone as their search_path: `-c search_path=…` appended to
 * its `options` (else to `pgOptions`, the PGOPTIONS the driver would send; a later setting wins),
 * so each connection starts with it and no statement has to set it. In that option a backslash
 * escapes the next character and spaces separate settings.
 */
export function withSearchPath(url: string, schema: string, pgOptions = ''): string {
  const u = new URL(url);
  const setting = `search_path=${quote(schema)}`.replace(/[\\\s]/g, (c) => `\\${c}`);
  const options = u.searchParams.get('options') ?? pgOptions;
  u.searchParams.set('options', `${options} -c ${setting}`.trim());
  return u.toString();
}

/**
 * Whether `schema` holds a gex store: its schema_migrations with gex's columns (another tool's
 * schema_migrations, e.g. Rails', is not one).
 */
export async function holdsStore(tx: SqlExecutor, schema: string): Promise<boolean> {
  const rows = await tx.all<{ name: string }>(
    `SELECT a.attname AS name FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ? AND c.relname = 'schema_migrations' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped`,
    [schema],
  );
  const names = new Set(rows.map((r) => r.name));
  return ['version', 'description', 'applied'].every((n) => names.has(n));
}

/**
 * Run inside the migration lock, before the numbered migrations: creates the store's schema, and
 * moves a store of the older layout (its tables in `legacy`, usually `public`) into it — each
 * table of an applied migration with `ALTER TABLE … SET SCHEMA`, which takes its indexes,
 * constraints and rows along. One transaction: all moved or none. Nothing happens when the schema
 * already holds a store, so it runs on every open and moves once. `tablesOf(version)` names the
 * tables a migration creates. Returns the tables moved.
 */
export async function prepareStoreSchema(
  tx: SqlExecutor,
  schema: StoreSchema,
  tablesOf: (version: number) => readonly string[],
): Promise<string[]> {
  if (!(await tx.get('SELECT 1 AS found FROM pg_namespace WHERE nspname = ?', [schema.name])))
    await tx.run(`CREATE SCHEMA ${quote(schema.name)}`);
  const legacy = schema.legacy;
  if (
    legacy === null ||
    legacy === schema.name ||
    (await holdsStore(tx, schema.name)) ||
    !(await holdsStore(tx, legacy))
  )
    return [];
  const applied = await tx.all<{ version: unknown }>(
    `SELECT version FROM ${quote(legacy)}.schema_migrations ORDER BY version`,
  );
  const wanted = new Set(['schema_migrations', ...applied.flatMap((r) => tablesOf(Number(r.version)))]);
  const present = await tx.all<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
    [legacy],
  );
  const moved = present.map((r) => r.name).filter((name) => wanted.has(name));
  for (const table of moved)
    await tx.run(`ALTER TABLE ${quote(legacy)}.${quote(table)} SET SCHEMA ${quote(schema.name)}`);
  return moved;
}
