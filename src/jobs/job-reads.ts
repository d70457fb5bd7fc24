import type { Database, SqlParam } from '../store/sql/database.js';
import { anyElementOf, anyOf as anyOfValues, type ListCondition } from '../store/sql/value-list.js';
import type { QueueJob } from './job-record.js';
import { inList, SELECT, STANDARD, toJob, type Row } from './job-rows.js';
import { SORT_COLUMNS, type JobSearch } from './job-search.js';
import { RUNNING, type JobStatus } from './statuses.js';

/** Queue jobs read from the store's database: one job, a project's search, statuses, who runs what. */
export class JobReads {
  constructor(protected readonly db: Database) {}

  /** A job of the project (another project's is not found); any project's when `projectId` is null. */
  async get(projectId: number | null, id: number): Promise<QueueJob | undefined> {
    const row =
      projectId === null
        ? await this.db.get<Row>(`${SELECT} WHERE j.id = ?`, [id])
        : await this.db.get<Row>(`${SELECT} WHERE j.id = ? AND j.project_id = ?`, [id, projectId]);
    return row && toJob(row);
  }

  /** The project's jobs matching every filter given, sorted and paged. */
  async search(projectId: number, search: JobSearch): Promise<QueueJob[]> {
    if (search.none) return [];
    const where: string[] = ['j.project_id = ?'];
    const params: SqlParam[] = [projectId];
    // lists of any length (src/store/sql/value-list.ts)
    const add = (condition: ListCondition) => {
      where.push(condition.sql);
      params.push(...condition.params);
    };
    const anyOf = (column: string, values: readonly string[] | readonly number[] | undefined) => {
      if (values !== undefined) add(anyOfValues(this.db.dialect, column, values));
    };
    const bound = (column: string, op: '>=' | '<=', value: string | number | undefined) => {
      if (value === undefined) return;
      where.push(`${column} ${op} ?`);
      params.push(value);
    };
    anyOf('j.id', search.ids);
    anyOf('j.run_id', search.runIds);
    anyOf('j.branch_id', search.branchIds);
    anyOf('j.token_id', search.tokenIds);
    anyOf('j.token_description', search.tokenDescriptions);
    anyOf('j.component_id', search.componentIds);
    anyOf('j.config_id', search.configIds);
    anyOf('j.mode', search.modes);
    anyOf('j.status', search.statuses);
    // config_row_ids is a JSON array of strings
    if (search.configRowIds) add(anyElementOf(this.db.dialect, 'j.config_row_ids', search.configRowIds));
    if (search.parentRunId === '') anyOf('j.parent_run_id', ['']);
    else if (search.parentRunId !== undefined) {
      // a flow's tree: the root's children (its phases) and theirs (the tasks)
      where.push(`(j.parent_run_id = ? OR j.parent_run_id LIKE ? ESCAPE '\\')`);
      params.push(search.parentRunId, `${search.parentRunId.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`);
    }
    anyOf('j.parent_run_id', search.parentRunIds);
    anyOf('j.type', search.types);
    bound('j.created', '>=', search.createdFrom);
    bound('j.created', '<=', search.createdTo);
    bound('j.started', '>=', search.startedFrom);
    bound('j.started', '<=', search.startedTo);
    bound('j.ended', '>=', search.endedFrom);
    bound('j.ended', '<=', search.endedTo);
    bound('j.duration_seconds', '>=', search.durationFrom);
    bound('j.duration_seconds', '<=', search.durationTo);
    const order = search.sortOrder === 'asc' ? 'ASC' : 'DESC';
    const column = `j.${SORT_COLUMNS[search.sortBy]}`;
    // nulls last either way, and the id breaks ties so pages never overlap
    const sql = `${SELECT} WHERE ${where.join(' AND ')}
      ORDER BY CASE WHEN ${column} IS NULL THEN 1 ELSE 0 END, ${column} ${order}, j.id ${order} LIMIT ? OFFSET ?`;
    return (await this.db.all<Row>(sql, [...params, search.limit, search.offset])).map(toJob);
  }

  /**
   * The latest job (highest id) of each configuration given that has one, in one query; a flow's
   * phase containers are not their configuration's jobs. Keyed by `configJobKey`.
   */
  async latestOfConfigurations(
    projectId: number,
    configs: ReadonlyArray<{ componentId: string; configId: string }>,
  ): Promise<Map<string, QueueJob>> {
    if (configs.length === 0) return new Map();
    const components = anyOfValues(this.db.dialect, 'component_id', [...new Set(configs.map((c) => c.componentId))]);
    const ids = anyOfValues(this.db.dialect, 'config_id', [...new Set(configs.map((c) => c.configId))]);
    const rows = await this.db.all<Row>(
      `${SELECT} WHERE j.id IN (SELECT MAX(id) FROM queue_jobs WHERE project_id = ? AND type <> 'phaseContainer'
        AND ${components.sql} AND ${ids.sql} GROUP BY component_id, config_id)`,
      [projectId, ...components.params, ...ids.params],
    );
    // the two lists match every pair of their values: keep the pairs asked for
    const wanted = new Set(configs.map((c) => configJobKey(c.componentId, c.configId)));
    const latest = new Map<string, QueueJob>();
    for (const job of rows.map(toJob)) {
      const key = configJobKey(job.componentId, job.configId);
      if (wanted.has(key)) latest.set(key, job);
    }
    return latest;
  }

  /** The statuses of these jobs now (a worker's check for kill requests sent to another server). */
  async statuses(ids: readonly number[]): Promise<Map<number, JobStatus>> {
    if (ids.length === 0) return new Map();
    const among = anyOfValues(this.db.dialect, 'id', ids);
    const rows = await this.db.all<Row>(`SELECT id, status FROM queue_jobs WHERE ${among.sql}`, among.params);
    return new Map(rows.map((r) => [Number(r.id), r.status as JobStatus]));
  }

  /** The running jobs and who runs them (to find those whose worker is gone). */
  async running(): Promise<Array<{ id: number; worker: string | null }>> {
    const rows = await this.db.all<Row>(
      `SELECT id, worker FROM queue_jobs WHERE status IN (${inList(RUNNING)}) AND ${STANDARD} ORDER BY id`,
    );
    return rows.map((r) => ({ id: Number(r.id), worker: r.worker === null ? null : String(r.worker) }));
  }
}

/** The key of a configuration in `latestOfConfigurations`' answer. */
export function configJobKey(componentId: string, configId: string): string {
  return `${componentId}\n${configId}`;
}
