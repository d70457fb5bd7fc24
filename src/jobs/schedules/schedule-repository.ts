import type { Database, SqlExecutor } from '../../store/sql/database.js';
import { anyOf } from '../../store/sql/value-list.js';
import type { JobRepository } from '../job-repository.js';
import type { NewJob, QueueJob } from '../job-record.js';
import type { ScheduleDefinition } from './schedule-definition.js';

/** An activated schedule: a version of a `keboola.scheduler` configuration, fired on behalf of a token. */
export interface ScheduleRecord {
  id: number;
  projectId: number;
  configurationId: string;
  configurationVersionId: number;
  tokenId: number;
  definition: ScheduleDefinition;
  created: string;
  /** why it no longer fires (its target or token is gone); null while it fires */
  stopped: string | null;
  /** the revision of its latest change (activated, stopped): a ticker reloads it when this moves */
  revision: number;
}

export interface Execution {
  jobId: number;
  /** the tick the job was created for (ISO, UTC) */
  executionTime: string;
}

/** executions kept per schedule (older tick rows are deleted as new ones are fired) */
export const EXECUTIONS_KEPT = 100;

/** the sequence whose value is the latest revision of the schedules (raised by every change) */
const REVISION = 'schedule-revision';

type Row = Record<string, unknown>;

const SELECT = `SELECT id, project_id, configuration_id, configuration_version_id, token_id, definition, created, stopped,
  revision FROM schedules`;

function toRecord(row: Row): ScheduleRecord {
  return {
    id: Number(row.id),
    projectId: Number(row.project_id),
    configurationId: String(row.configuration_id),
    configurationVersionId: Number(row.configuration_version_id),
    tokenId: Number(row.token_id),
    definition: JSON.parse(String(row.definition)) as ScheduleDefinition,
    created: String(row.created),
    stopped: row.stopped === null || row.stopped === undefined ? null : String(row.stopped),
    revision: Number(row.revision),
  };
}

/**
 * Schedules and their fired ticks in the store's database. A tick is fired by inserting its
 * `(schedule, tick)` row in the transaction that creates its job: whichever process inserts it
 * first creates the job, every other one finds the row and does nothing — on SQLite and on
 * PostgreSQL, across any number of servers and workers and across crashes.
 *
 * Every change (activate, stop, remove) takes the next revision in its transaction — a row of
 * `sequences`, locked until the change commits, so revisions become visible in the order they
 * were taken — and stamps the schedule with it: a ticker asks for the latest revision each
 * second (one row) and reads only the schedules changed since the one it knows.
 */
export class ScheduleRepository {
  constructor(private readonly db: Database) {}

  private async nextRevision(tx: SqlExecutor): Promise<number> {
    const row = await tx.get<Row>(
      'INSERT INTO sequences (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1 RETURNING value',
      [REVISION],
    );
    return Number(row!.value);
  }

  /** The revision of the latest change to any schedule (0 before the first). */
  async revision(): Promise<number> {
    const row = await this.db.get<Row>('SELECT value FROM sequences WHERE name = ?', [REVISION]);
    return row ? Number(row.value) : 0;
  }

  /**
   * Schedules of every project changed after revision `since` (stopped ones too), in order of
   * revision and id, at most `limit` after `cursor` (the last one of the previous page).
   */
  async changedSince(since: number, limit: number, cursor?: ScheduleRecord): Promise<ScheduleRecord[]> {
    const page = Math.max(1, Math.min(10_000, Math.trunc(limit)));
    const rows = cursor
      ? await this.db.all<Row>(
          `${SELECT} WHERE revision > ? AND (revision > ? OR (revision = ? AND id > ?)) ORDER BY revision, id LIMIT ${page}`,
          [since, cursor.revision, cursor.revision, cursor.id],
        )
      : await this.db.all<Row>(`${SELECT} WHERE revision > ? ORDER BY revision, id LIMIT ${page}`, [since]);
    return rows.map(toRecord);
  }

  /** How many schedules there are, of every project (a ticker's check for deleted ones). */
  async count(): Promise<number> {
    return Number((await this.db.get<Row>('SELECT COUNT(*) AS n FROM schedules'))?.n ?? 0);
  }

  /** The ids of every schedule, of every project. */
  async ids(): Promise<number[]> {
    return (await this.db.all<Row>('SELECT id FROM schedules')).map((row) => Number(row.id));
  }

  /**
   * Activates a configuration version as the configuration's one schedule: a new schedule, or the
   * configuration's existing one updated in place (same id, its executions kept, firing again).
   */
  async activate(
    input: Omit<ScheduleRecord, 'id' | 'created' | 'stopped' | 'revision'>,
    now = new Date(),
  ): Promise<ScheduleRecord> {
    return this.db.transaction(async (tx) => {
      const existing = await tx.get<Row>(
        'SELECT id FROM schedules WHERE project_id = ? AND configuration_id = ? ORDER BY id LIMIT 1',
        [input.projectId, input.configurationId],
      );
      const revision = await this.nextRevision(tx);
      let id: number;
      if (existing) {
        id = Number(existing.id);
        await tx.run(
          `UPDATE schedules SET configuration_version_id = ?, token_id = ?, definition = ?, stopped = NULL, revision = ?
            WHERE id = ?`,
          [input.configurationVersionId, input.tokenId, JSON.stringify(input.definition), revision, id],
        );
      } else {
        const seq = await tx.get<Row>(
          'INSERT INTO sequences (name, value) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET value = sequences.value + 1 RETURNING value',
          ['schedule'],
        );
        id = Number(seq!.value);
        await tx.run(
          `INSERT INTO schedules (id, project_id, configuration_id, configuration_version_id, token_id, definition, created,
            revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          [
            id,
            input.projectId,
            input.configurationId,
            input.configurationVersionId,
            input.tokenId,
            JSON.stringify(input.definition),
            now.toISOString(),
            revision,
          ],
        );
      }
      return toRecord((await tx.get<Row>(`${SELECT} WHERE id = ?`, [id]))!);
    });
  }

  /** The project's schedules by id; another project's are not there. */
  async list(projectId: number): Promise<ScheduleRecord[]> {
    return (await this.db.all<Row>(`${SELECT} WHERE project_id = ? ORDER BY id`, [projectId])).map(toRecord);
  }

  async get(projectId: number, id: number): Promise<ScheduleRecord | undefined> {
    const row = await this.db.get<Row>(`${SELECT} WHERE project_id = ? AND id = ?`, [projectId, id]);
    return row && toRecord(row);
  }

  /** Deletes a schedule of the project; false when there is none. */
  async remove(projectId: number, id: number): Promise<boolean> {
    return this.db.transaction(
      async (tx) => (await this.deleteWhere(tx, 'project_id = ? AND id = ?', [projectId, id])) > 0,
    );
  }

  /** Deletes every schedule of a `keboola.scheduler` configuration; how many there were. */
  async removeByConfiguration(projectId: number, configurationId: string): Promise<number> {
    return this.db.transaction((tx) =>
      this.deleteWhere(tx, 'project_id = ? AND configuration_id = ?', [projectId, configurationId]),
    );
  }

  private async deleteWhere(tx: SqlExecutor, where: string, params: Array<string | number>): Promise<number> {
    await this.nextRevision(tx);
    await tx.run(`DELETE FROM schedule_ticks WHERE schedule_id IN (SELECT id FROM schedules WHERE ${where})`, params);
    return (await tx.run(`DELETE FROM schedules WHERE ${where}`, params)).changes;
  }

  /** Stops a schedule for good, saying why (shown by the API's list and `gex schedules list`). */
  async stop(id: number, reason: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const revision = await this.nextRevision(tx);
      await tx.run('UPDATE schedules SET stopped = ?, revision = ? WHERE id = ? AND stopped IS NULL', [
        reason.slice(0, 500),
        revision,
        id,
      ]);
    });
  }

  /** The latest fired tick of a schedule (ISO), if any. */
  async lastTick(id: number): Promise<string | undefined> {
    const row = await this.db.get<Row>('SELECT MAX(tick) AS tick FROM schedule_ticks WHERE schedule_id = ?', [id]);
    return row?.tick === null || row?.tick === undefined ? undefined : String(row.tick);
  }

  /** The latest fired tick (ISO) of each of these schedules that has one. */
  async lastTicks(ids: readonly number[]): Promise<Map<number, string>> {
    const found = new Map<number, string>();
    if (ids.length === 0) return found;
    // any number of schedules (src/store/sql/value-list.ts)
    const among = anyOf(this.db.dialect, 'schedule_id', ids);
    const rows = await this.db.all<Row>(
      `SELECT schedule_id, MAX(tick) AS tick FROM schedule_ticks WHERE ${among.sql} GROUP BY schedule_id`,
      among.params,
    );
    for (const row of rows) if (row.tick !== null) found.set(Number(row.schedule_id), String(row.tick));
    return found;
  }

  /** Which of these jobs a schedule's tick fired. */
  async firedJobIds(jobIds: readonly number[]): Promise<Set<number>> {
    if (jobIds.length === 0) return new Set();
    const among = anyOf(this.db.dialect, 'job_id', jobIds);
    const rows = await this.db.all<Row>(`SELECT job_id FROM schedule_ticks WHERE ${among.sql}`, among.params);
    return new Set(rows.map((row) => Number(row.job_id)));
  }

  /** Executions of schedules, newest first, at most EXECUTIONS_KEPT each. */
  async executions(ids: readonly number[]): Promise<Map<number, Execution[]>> {
    const found = new Map<number, Execution[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return found;
    // any number of schedules (src/store/sql/value-list.ts)
    const among = anyOf(this.db.dialect, 'schedule_id', ids);
    const rows = await this.db.all<Row>(
      `SELECT schedule_id, tick, job_id FROM schedule_ticks WHERE ${among.sql} ORDER BY tick DESC`,
      among.params,
    );
    for (const row of rows) {
      const list = found.get(Number(row.schedule_id));
      if (list && list.length < EXECUTIONS_KEPT)
        list.push({ jobId: Number(row.job_id), executionTime: String(row.tick) });
    }
    return found;
  }

  /**
   * Fires `tick` of a schedule: its row and the job are stored in one transaction, or neither.
   * Returns the job, or undefined when the tick had been fired already (by any process) or the
   * schedule changed since `schedule` was read.
   */
  async fire(
    schedule: ScheduleRecord,
    tick: Date,
    job: NewJob,
    jobs: JobRepository,
    now = new Date(),
  ): Promise<QueueJob | undefined> {
    const tickText = tick.toISOString();
    return jobs.createIf(
      job,
      async (tx, jobId) => {
        // the schedule may have been removed, stopped or changed since the ticker read it
        if (
          !(await tx.get('SELECT id FROM schedules WHERE id = ? AND stopped IS NULL AND revision = ?', [
            schedule.id,
            schedule.revision,
          ]))
        )
          return false;
        // fired already: checked before a job id is taken (the queue lock serialises this transaction)
        if (
          await tx.get('SELECT job_id FROM schedule_ticks WHERE schedule_id = ? AND tick = ?', [schedule.id, tickText])
        )
          return false;
        const inserted = await tx.run(
          'INSERT INTO schedule_ticks (schedule_id, tick, job_id, fired) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
          [schedule.id, tickText, await jobId(), now.toISOString()],
        );
        if (inserted.changes !== 1) return false;
        await tx.run(
          `DELETE FROM schedule_ticks WHERE schedule_id = ? AND tick < (
            SELECT tick FROM schedule_ticks WHERE schedule_id = ? ORDER BY tick DESC LIMIT 1 OFFSET ${EXECUTIONS_KEPT - 1})`,
          [schedule.id, schedule.id],
        );
        return true;
      },
      now,
    );
  }
}
