import { versionListsToRanges } from '../embedded/version-ranges-migration.js';
import type { Database, Dialect, SqlExecutor } from './database.js';
import { prepareStoreSchema } from './store-schema.js';

/** A statement, or a step in code (in the migration's transaction): carrying data over, a dialect's own setting. */
type MigrationStep = string | ((tx: SqlExecutor, dialect: Dialect) => Promise<void>);

/**
 * Versioned schema migrations, in SQL both SQLite and PostgreSQL accept. A database is brought
 * up to date on open; applied migrations are recorded and never run twice; no data is lost (a
 * column is dropped only after its data was carried over).
 */
export const MIGRATIONS: Array<{ version: number; description: string; statements: MigrationStep[] }> = [
  {
    version: 1,
    description: 'projects, tokens, components, configurations, rows, versions, metadata',
    statements: [
      `CREATE TABLE sequences (name TEXT PRIMARY KEY, value BIGINT NOT NULL)`,
      `CREATE TABLE projects (id BIGINT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created TEXT NOT NULL)`,
      `CREATE TABLE tokens (
        id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL REFERENCES projects(id),
        description TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE, read_only INTEGER NOT NULL,
        internal INTEGER NOT NULL, created TEXT NOT NULL)`,
      `CREATE TABLE components (
        id TEXT PRIMARY KEY, type TEXT NOT NULL, name TEXT NOT NULL, definition TEXT NOT NULL, builtin INTEGER NOT NULL)`,
      `CREATE TABLE configurations (
        project_id BIGINT NOT NULL, component_id TEXT NOT NULL, id TEXT NOT NULL,
        created TEXT NOT NULL, creator_token_id BIGINT NOT NULL, creator_token_description TEXT NOT NULL,
        version INTEGER NOT NULL, is_deleted INTEGER NOT NULL,
        name TEXT NOT NULL, description TEXT NOT NULL, configuration TEXT NOT NULL,
        is_disabled INTEGER NOT NULL, rows_sort_order TEXT NOT NULL,
        change_description TEXT NOT NULL, version_created TEXT NOT NULL,
        version_token_id BIGINT NOT NULL, version_token_description TEXT NOT NULL, version_identifier TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (project_id, component_id, id))`,
      `CREATE TABLE configuration_versions (
        project_id BIGINT NOT NULL, component_id TEXT NOT NULL, configuration_id TEXT NOT NULL, version INTEGER NOT NULL,
        created TEXT NOT NULL, token_id BIGINT NOT NULL, token_description TEXT NOT NULL,
        change_description TEXT NOT NULL, version_identifier TEXT NOT NULL,
        name TEXT NOT NULL, description TEXT NOT NULL, configuration TEXT NOT NULL,
        is_disabled INTEGER NOT NULL, is_deleted INTEGER NOT NULL, rows_sort_order TEXT NOT NULL, rows TEXT NOT NULL,
        PRIMARY KEY (project_id, component_id, configuration_id, version))`,
      `CREATE TABLE configuration_rows (
        project_id BIGINT NOT NULL, component_id TEXT NOT NULL, configuration_id TEXT NOT NULL, id TEXT NOT NULL,
        created TEXT NOT NULL, creator_token_id BIGINT NOT NULL, creator_token_description TEXT NOT NULL,
        version INTEGER NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL, configuration TEXT NOT NULL,
        is_disabled INTEGER NOT NULL, change_description TEXT NOT NULL, version_identifier TEXT NOT NULL,
        version_created TEXT NOT NULL, version_token_id BIGINT NOT NULL, version_token_description TEXT NOT NULL,
        state TEXT NOT NULL, is_deleted INTEGER NOT NULL,
        PRIMARY KEY (project_id, component_id, configuration_id, id))`,
      `CREATE TABLE row_versions (
        project_id BIGINT NOT NULL, component_id TEXT NOT NULL, configuration_id TEXT NOT NULL, row_id TEXT NOT NULL,
        version INTEGER NOT NULL, created TEXT NOT NULL, token_id BIGINT NOT NULL, token_description TEXT NOT NULL,
        change_description TEXT NOT NULL, version_identifier TEXT NOT NULL,
        name TEXT NOT NULL, description TEXT NOT NULL, configuration TEXT NOT NULL, is_disabled INTEGER NOT NULL,
        PRIMARY KEY (project_id, component_id, configuration_id, row_id, version))`,
      `CREATE TABLE configuration_metadata (
        id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL, component_id TEXT NOT NULL, configuration_id TEXT NOT NULL,
        meta_key TEXT NOT NULL, meta_value TEXT NOT NULL, provider TEXT, timestamp TEXT NOT NULL,
        UNIQUE (project_id, component_id, configuration_id, meta_key))`,
    ],
  },
  {
    version: 2,
    description: 'store settings (the master key check)',
    statements: [`CREATE TABLE store_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)`],
  },
  {
    version: 3,
    description: 'project Storage tables: buckets and tables mapped to generated physical names',
    statements: [
      // physical_schema: PostgreSQL's schema of the bucket; null on SQLite (tables live in the main database)
      `CREATE TABLE storage_buckets (
        project_id BIGINT NOT NULL REFERENCES projects(id), id TEXT NOT NULL, physical_schema TEXT UNIQUE,
        created TEXT NOT NULL, PRIMARY KEY (project_id, id))`,
      // columns and primary_key: JSON; physical_name unique across the database
      `CREATE TABLE storage_tables (
        project_id BIGINT NOT NULL, bucket_id TEXT NOT NULL, name TEXT NOT NULL,
        physical_name TEXT NOT NULL, columns TEXT NOT NULL, primary_key TEXT NOT NULL,
        created TEXT NOT NULL, last_import_date TEXT NOT NULL, last_change_date TEXT,
        PRIMARY KEY (project_id, bucket_id, name),
        FOREIGN KEY (project_id, bucket_id) REFERENCES storage_buckets(project_id, id))`,
    ],
  },
  {
    version: 4,
    description: 'bucket descriptions; Storage jobs of the HTTP API (finished deletes clients poll)',
    statements: [
      `ALTER TABLE storage_buckets ADD COLUMN description TEXT NOT NULL DEFAULT ''`,
      // body: the job's Keboola JSON; kept a day (clients poll within seconds), so the table stays small
      `CREATE TABLE storage_jobs (
        id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL REFERENCES projects(id), created TEXT NOT NULL, body TEXT NOT NULL)`,
      `CREATE INDEX storage_jobs_created ON storage_jobs (project_id, created)`,
    ],
  },
  {
    version: 5,
    description: 'token management over HTTP: master tokens, refresh times, creators',
    statements: [
      // existing tokens stay what they were: none could manage tokens (no privilege appears on upgrade)
      `ALTER TABLE tokens ADD COLUMN can_manage_tokens INTEGER NOT NULL DEFAULT 0`,
      // null: never refreshed (the creation time is shown)
      `ALTER TABLE tokens ADD COLUMN refreshed TEXT`,
      // null: made by the store's operator (gex tokens create), not by another token
      `ALTER TABLE tokens ADD COLUMN creator_token_id BIGINT`,
      `ALTER TABLE tokens ADD COLUMN creator_token_description TEXT`,
    ],
  },
  {
    version: 6,
    description:
      'configuration versions share unchanged rows: each row version holds the range of versions it is in, instead of a copy of every row per version',
    statements: [
      // each row version is held by configuration versions held_from…held_until (null until: up to the current one)
      `ALTER TABLE row_versions ADD COLUMN held_from INTEGER`,
      `ALTER TABLE row_versions ADD COLUMN held_until INTEGER`,
      // the row versions the current configuration version holds: closed one by one or all at once
      `CREATE INDEX row_versions_held_now ON row_versions (project_id, component_id, configuration_id, row_id)
        WHERE held_from IS NOT NULL AND held_until IS NULL`,
      // configuration versions first_version…last_version list the row at position of their custom rowsSortOrder
      `CREATE TABLE configuration_version_row_order (
        project_id BIGINT NOT NULL, component_id TEXT NOT NULL, configuration_id TEXT NOT NULL, row_id TEXT NOT NULL,
        position INTEGER NOT NULL, first_version INTEGER NOT NULL, last_version INTEGER,
        PRIMARY KEY (project_id, component_id, configuration_id, first_version, position))`,
      `CREATE INDEX configuration_version_row_order_open ON configuration_version_row_order (project_id, component_id, configuration_id, position)
        WHERE last_version IS NULL`,
      versionListsToRanges,
      `ALTER TABLE configuration_versions DROP COLUMN rows`,
      `ALTER TABLE configuration_versions DROP COLUMN rows_sort_order`,
    ],
  },
  {
    version: 7,
    description: 'queue jobs (Job Queue API) and their log events',
    statements: [
      // config_row_ids and result: JSON; times: ISO 8601 UTC text (fixed width, so text order is time order);
      // worker: who runs it (host:pid), set while processing
      `CREATE TABLE queue_jobs (
        id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL REFERENCES projects(id),
        component_id TEXT NOT NULL, config_id TEXT NOT NULL, branch_id TEXT NOT NULL,
        status TEXT NOT NULL, desired_status TEXT NOT NULL, mode TEXT NOT NULL,
        run_id TEXT NOT NULL, parent_run_id TEXT NOT NULL,
        token_id BIGINT NOT NULL, token_description TEXT NOT NULL,
        config_row_ids TEXT NOT NULL, tag TEXT, orchestration_job_id TEXT,
        created TEXT NOT NULL, started TEXT, ended TEXT, duration_seconds BIGINT,
        result TEXT NOT NULL, worker TEXT, timeout_seconds BIGINT)`,
      `CREATE INDEX queue_jobs_project ON queue_jobs (project_id, id)`,
      `CREATE INDEX queue_jobs_pending ON queue_jobs (status, id)`,
      // the rule "one running job per configuration" held by the database itself, whoever claims
      `CREATE UNIQUE INDEX queue_jobs_one_running ON queue_jobs (project_id, component_id, config_id, branch_id)
        WHERE status IN ('processing', 'terminating')`,
      `CREATE TABLE queue_job_events (
        job_id BIGINT NOT NULL, seq INTEGER NOT NULL, project_id BIGINT NOT NULL,
        created TEXT NOT NULL, level TEXT NOT NULL, message TEXT NOT NULL,
        PRIMARY KEY (job_id, seq))`,
    ],
  },
  {
    version: 8,
    description: 'queue job retries; finished jobs found by age (retention)',
    statements: [
      // retry_limit: retries the job may still be given after an application error or a lost worker, fixed when created;
      // attempt: 1 for the first run, +1 per retry
      `ALTER TABLE queue_jobs ADD COLUMN retry_limit INTEGER NOT NULL DEFAULT 0`,
      `ALTER TABLE queue_jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1`,
      `CREATE INDEX queue_jobs_ended ON queue_jobs (ended) WHERE ended IS NOT NULL`,
    ],
  },
  {
    version: 9,
    description: 'File Storage (files and their chunks); Storage jobs that run after their request (status, worker)',
    statements: [
      // expires: null for a permanent file; state: prepared, uploading (chunks being written, not readable) or uploaded;
      // size_bytes: null until uploaded; tags: JSON list
      `CREATE TABLE storage_files (
        id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL REFERENCES projects(id),
        name TEXT NOT NULL, created TEXT NOT NULL, expires TEXT, is_encrypted INTEGER NOT NULL,
        tags TEXT NOT NULL, state TEXT NOT NULL, size_bytes BIGINT,
        token_id BIGINT NOT NULL, token_description TEXT NOT NULL)`,
      `CREATE INDEX storage_files_project ON storage_files (project_id, created)`,
      `CREATE INDEX storage_files_expires ON storage_files (expires) WHERE expires IS NOT NULL`,
      // a file's bytes in pieces of about 1 MiB (seq from 0), so neither side ever holds a whole file;
      // BYTEA: PostgreSQL's bytes; SQLite stores the blob as given whatever the declared type
      `CREATE TABLE storage_file_chunks (
        file_id BIGINT NOT NULL, seq INTEGER NOT NULL, bytes BYTEA NOT NULL, PRIMARY KEY (file_id, seq))`,
      // PostgreSQL would compress every chunk (4x the upload's time for CSV): files are stored as sent
      async (tx, dialect) => {
        if (dialect.name === 'postgres')
          await tx.run('ALTER TABLE storage_file_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL');
      },
      // jobs recorded before this version had finished: success
      `ALTER TABLE storage_jobs ADD COLUMN status TEXT NOT NULL DEFAULT 'success'`,
      // who runs a waiting or processing job (host, pid and start mark), to end it when that process is gone
      `ALTER TABLE storage_jobs ADD COLUMN worker TEXT`,
      `CREATE INDEX storage_jobs_running ON storage_jobs (status) WHERE status IN ('waiting', 'processing')`,
    ],
  },
  {
    version: 10,
    description: 'schedules (activated keboola.scheduler configurations) and their fired ticks',
    statements: [
      // definition: the schedule and target as activated (JSON); stopped: why it no longer fires, null while it does
      `CREATE TABLE schedules (
        id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL REFERENCES projects(id),
        configuration_id TEXT NOT NULL, configuration_version_id INTEGER NOT NULL,
        token_id BIGINT NOT NULL, definition TEXT NOT NULL, created TEXT NOT NULL, stopped TEXT)`,
      `CREATE INDEX schedules_project ON schedules (project_id, configuration_id)`,
      // one row per fired tick: the primary key is what makes a tick fire once across every process
      `CREATE TABLE schedule_ticks (
        schedule_id BIGINT NOT NULL, tick TEXT NOT NULL, job_id BIGINT NOT NULL, fired TEXT NOT NULL,
        PRIMARY KEY (schedule_id, tick))`,
    ],
  },
  {
    version: 11,
    description: "runner tokens: may receive their project's secrets decrypted, for a run elsewhere",
    statements: [
      // existing tokens stay what they were: none may receive plaintext (no privilege appears on upgrade)
      `ALTER TABLE tokens ADD COLUMN runner INTEGER NOT NULL DEFAULT 0`,
    ],
  },
  {
    version: 12,
    description: 'worker pools of servers and workers (who runs the queue: registered at start, heartbeat)',
    statements: [
      // identity: the process (host, pid, start mark, instance) as JSON; capacity: jobs it runs at once
      `CREATE TABLE queue_workers (
        identity TEXT PRIMARY KEY, host TEXT NOT NULL, capacity INTEGER NOT NULL, started TEXT NOT NULL, seen TEXT NOT NULL)`,
    ],
  },
  {
    version: 13,
    description: 'metadata of Storage buckets, tables and columns (Keboola provider/key/value items)',
    statements: [
      // the object: bucket_id, table_name ('' for a bucket's own), column_name ('' for a bucket's or a table's own);
      // *_ref: hashes of [bucket], [bucket, table] and [bucket, table, column], so index rows stay small whatever
      // the names' length; ids (from `sequences`, reserved before the write) increase in the order items are
      // first set (lists are ordered by id)
      `CREATE TABLE storage_metadata (
        id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL REFERENCES projects(id),
        bucket_id TEXT NOT NULL, table_name TEXT NOT NULL, column_name TEXT NOT NULL,
        bucket_ref TEXT NOT NULL, table_ref TEXT NOT NULL, target_ref TEXT NOT NULL,
        provider TEXT NOT NULL, meta_key TEXT NOT NULL, meta_value TEXT NOT NULL, timestamp TEXT NOT NULL,
        UNIQUE (project_id, target_ref, provider, meta_key))`,
      `CREATE INDEX storage_metadata_table ON storage_metadata (project_id, table_ref)`,
      `CREATE INDEX storage_metadata_bucket ON storage_metadata (project_id, bucket_ref)`,
      // a table list reads the buckets' and tables' own items, not every column's
      `CREATE INDEX storage_metadata_own ON storage_metadata (project_id, id) WHERE column_name = ''`,
    ],
  },
  {
    version: 14,
    description: 'schedules: the revision of their latest change, so tickers read only what changed',
    statements: [
      // every change takes the next value of the sequence "schedule-revision" (schedule-repository.ts)
      `ALTER TABLE schedules ADD COLUMN revision BIGINT NOT NULL DEFAULT 0`,
      `CREATE INDEX schedules_revision ON schedules (revision, id)`,
    ],
  },
  {
    version: 15,
    description: "flows: a job's type (containers of a flow's tree) and task, and each flow run's progress",
    statements: [
      `ALTER TABLE queue_jobs ADD COLUMN type TEXT NOT NULL DEFAULT 'standard'`,
      `ALTER TABLE queue_jobs ADD COLUMN orchestration_task_id TEXT`,
      `ALTER TABLE queue_jobs ADD COLUMN config_data TEXT`,
      // a flow's container jobs are not runs: the rule "one running per configuration" is for runs
      `DROP INDEX queue_jobs_one_running`,
      `CREATE UNIQUE INDEX queue_jobs_one_running ON queue_jobs (project_id, component_id, config_id, branch_id)
        WHERE status IN ('processing', 'terminating') AND type = 'standard'`,
      `CREATE INDEX queue_jobs_orchestration ON queue_jobs (orchestration_job_id)`,
      // a flow run: what it runs (the definition when it started), where it is, when it must look again
      `CREATE TABLE flow_runs (
        root_job_id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL, component_id TEXT NOT NULL,
        definition TEXT NOT NULL, only_task_ids TEXT, entered TEXT NOT NULL, notified TEXT NOT NULL,
        killed INTEGER NOT NULL DEFAULT 0, wake_at TEXT, ended INTEGER NOT NULL DEFAULT 0)`,
      `CREATE INDEX flow_runs_open ON flow_runs (ended, wake_at)`,
    ],
  },
  {
    version: 16,
    description: 'the console: which jobs a schedule fired, found by job',
    statements: [`CREATE INDEX schedule_ticks_job ON schedule_ticks (job_id)`],
  },
  {
    version: 17,
    description: "the console: a job's parent and children, found by run id",
    statements: [
      `CREATE INDEX queue_jobs_run ON queue_jobs (project_id, run_id)`,
      `CREATE INDEX queue_jobs_parent_run ON queue_jobs (project_id, parent_run_id)`,
    ],
  },
  {
    version: 18,
    description: "the Notification API: a project's subscriptions to job events",
    statements: [
      // recipient: what answers show (a webhook URL's query masked); sealed: the whole URL and the
      // signing secret, encrypted under the master key (jobs/notifications/subscription-repository.ts)
      `CREATE TABLE notification_subscriptions (
        id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL REFERENCES projects(id),
        event TEXT NOT NULL, filters TEXT NOT NULL, recipient TEXT NOT NULL, sealed TEXT, created TEXT NOT NULL)`,
      `CREATE INDEX notification_subscriptions_project ON notification_subscriptions (project_id, id)`,
    ],
  },
  {
    version: 19,
    description: 'notifications: the outbox of events (written with the job end) and every delivery attempt',
    statements: [
      // one event per subscription and job and event: written in the transaction of the job's end
      // (or, for a long run, once by whichever monitor sees it first); `next_attempt` is when it is
      // due — a sender taking it moves it past its lease, so a sender that dies leaves it due again
      `CREATE TABLE notification_events (
        id BIGINT PRIMARY KEY, project_id BIGINT NOT NULL, subscription_id BIGINT NOT NULL,
        event TEXT NOT NULL, job_id BIGINT NOT NULL, delivery_id TEXT NOT NULL, payload TEXT NOT NULL,
        created TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt TEXT NOT NULL, last_status_code INTEGER, last_message TEXT, ended TEXT)`,
      `CREATE UNIQUE INDEX notification_events_once ON notification_events (subscription_id, job_id, event)`,
      `CREATE INDEX notification_events_due ON notification_events (status, next_attempt)`,
      `CREATE INDEX notification_events_project ON notification_events (project_id, id)`,
      `CREATE TABLE notification_attempts (
        event_id BIGINT NOT NULL, attempt INTEGER NOT NULL, project_id BIGINT NOT NULL,
        started TEXT NOT NULL, duration_ms BIGINT NOT NULL, outcome TEXT NOT NULL,
        status_code INTEGER, message TEXT NOT NULL, sender TEXT NOT NULL, PRIMARY KEY (event_id, attempt))`,
    ],
  },
  {
    version: 20,
    description: 'storage_files: the size a direct upload to the object store declared, and its multipart upload',
    statements: [
      // a file prepared for an upload straight to the bucket: the size it was signed for (null:
      // uploaded through the server) and the id of its multipart upload (null: one PUT or none)
      `ALTER TABLE storage_files ADD COLUMN declared_size BIGINT`,
      `ALTER TABLE storage_files ADD COLUMN upload_id TEXT`,
    ],
  },
];

export const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied TEXT NOT NULL)`;

const CREATE_TABLE = /^\s*CREATE TABLE (?:IF NOT EXISTS )?([A-Za-z_][A-Za-z0-9_]*)/i;

/** The tables migration `version` creates (what moves with the store when its schema changes). */
export function tablesCreatedBy(version: number): string[] {
  const migration = MIGRATIONS.find((m) => m.version === version);
  return (migration?.statements ?? []).flatMap((s) => (typeof s === 'string' ? (CREATE_TABLE.exec(s)?.[1] ?? []) : []));
}

/** Takes the dialect's migration lock (if any) in this transaction. */
async function lockMigrations(db: Database, tx: SqlExecutor): Promise<void> {
  if (db.dialect.migrationLock) await tx.get(db.dialect.migrationLock);
}

/**
 * Applies pending migrations (up to `upTo`, default all), one transaction each. Every transaction
 * first takes the migration lock, so processes starting together on one PostgreSQL database
 * wait for each other instead of racing on CREATE TABLE; each re-checks what is applied. The
 * first one also puts the store in its schema on PostgreSQL (see store-schema.ts).
 */
export async function migrate(db: Database, options: { upTo?: number } = {}): Promise<number[]> {
  const schema = await db.storeSchema?.();
  await db.transaction(async (tx) => {
    await lockMigrations(db, tx);
    if (schema) await prepareStoreSchema(tx, schema, tablesCreatedBy);
    await tx.run(CREATE_MIGRATIONS_TABLE);
  });
  const ran: number[] = [];
  for (const migration of MIGRATIONS) {
    if (migration.version > (options.upTo ?? Infinity)) break;
    // carrying data over may take longer than a statement may (PostgreSQL's statement timeout)
    const carriesData = migration.statements.some((step) => typeof step !== 'string');
    await db.transaction(
      async (tx) => {
        await lockMigrations(db, tx);
        // another process may have applied it meanwhile
        if (await tx.get('SELECT version FROM schema_migrations WHERE version = ?', [migration.version])) return;
        for (const step of migration.statements) {
          if (typeof step === 'string') await tx.run(step);
          else await step(tx, db.dialect);
        }
        await tx.run('INSERT INTO schema_migrations (version, description, applied) VALUES (?, ?, ?)', [
          migration.version,
          migration.description,
          new Date().toISOString(),
        ]);
        ran.push(migration.version);
      },
      { bulk: carriesData },
    );
  }
  return ran;
}
