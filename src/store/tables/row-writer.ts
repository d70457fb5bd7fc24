import { randomBytes } from 'node:crypto';
import { UniqueViolation, type SqlParam, type TransactionExecutor } from '../sql/database.js';
import { quoteIdentifier, TIMESTAMP_COLUMN } from './physical-names.js';

/**
 * Where a load's rows go, by each database's fastest way in: PostgreSQL's `COPY … FROM STDIN`,
 * SQLite's prepared statements run in one synchronous loop. Both keep Keboola's semantics: the
 * rows arrive in file order and, with a key, the last row of a key in the file wins. `Batch` is
 * how a batch of rows arrives: their values, or the text of their CSV records.
 */
export interface BatchWriter<Batch> {
  /** Inserts every row (the values of `columns`, `now` as `_timestamp`); returns the rows inserted. */
  append(rows: AsyncIterable<Batch>): Promise<number>;
  /**
   * Replaces the table's rows of each key in the file (`keyColumns`, a subset of `columns`) by the
   * file's last row of that key; returns the rows deleted and inserted.
   */
  upsert(rows: AsyncIterable<Batch>, keyColumns: readonly string[], table: TableState): Promise<number>;
}

/**
 * The table before the rows: 'new' — created by this load's transaction, no rows, no key index
 * yet (the writer creates it, named `keyIndexName`); 'empty' — a full load deleted its rows; 'filled' — it may
 * have rows of the file's keys.
 */
export type TableState = 'new' | 'empty' | 'filled';

/**
 * A writer and what it takes: 'values' — each row's values; 'csv' — each record's CSV text in the
 * `,` / `"` dialect without its line break (fields checked, `""`-doubled quotes, line breaks only
 * inside quotes), as the CSV scanner passes it through or `csvRecordText` writes it.
 */
export type RowWriter =
  | { readonly takes: 'values'; readonly writer: BatchWriter<string[][]> }
  | { readonly takes: 'csv'; readonly writer: BatchWriter<string[]> };

/** The table a writer writes: its qualified SQL name and the physical names of the file's columns. */
export interface WriteTarget {
  readonly table: string;
  readonly columns: readonly string[];
  /** the `_timestamp` of every row written */
  readonly now: string;
  /** the name of the key index an upsert into a 'new' table creates */
  readonly keyIndexName: string;
}

const createKeyIndex = (target: WriteTarget, keyColumns: readonly string[], unique = false): string =>
  `CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${quoteIdentifier(target.keyIndexName)} ON ${target.table} (${list(keyColumns)})`;

/** The writer for `tx`'s database: COPY where the database has it, prepared statements elsewhere. */
export function rowWriter(tx: TransactionExecutor, target: WriteTarget): RowWriter {
  return tx.copyFrom
    ? { takes: 'csv', writer: new CopyRowWriter(tx, tx.copyFrom.bind(tx), target) }
    : { takes: 'values', writer: new PreparedRowWriter(tx, target) };
}

/** work_mem of a keyed load's transaction (PostgreSQL's default, 4 MB, sorts a million keys on disk) */
const KEYED_LOAD_WORK_MEM = '64MB';

const list = (names: readonly string[]): string => names.map(quoteIdentifier).join(', ');

class PreparedRowWriter implements BatchWriter<string[][]> {
  private readonly insert: string;

  constructor(
    private readonly tx: TransactionExecutor,
    private readonly target: WriteTarget,
  ) {
    const columns = [...target.columns, TIMESTAMP_COLUMN];
    this.insert = `INSERT INTO ${target.table} (${list(columns)}) VALUES (${columns.map(() => '?').join(', ')})`;
  }

  async append(rows: AsyncIterable<string[][]>): Promise<number> {
    let inserted = 0;
    for await (const batch of rows) inserted += (await this.tx.runEach(this.insert, this.stamped(batch))).changes;
    return inserted;
  }

  /** Per batch: its last row of each key; the table's rows of those keys deleted (rows of earlier batches too), then the rows inserted. */
  async upsert(rows: AsyncIterable<string[][]>, keyColumns: readonly string[], table: TableState): Promise<number> {
    // each batch deletes by key: the index first
    if (table === 'new') await this.tx.run(createKeyIndex(this.target, keyColumns));
    const keyIndexes = keyColumns.map((k) => this.target.columns.indexOf(k));
    const deleteByKey = `DELETE FROM ${this.target.table} WHERE ${keyColumns.map((k) => `${quoteIdentifier(k)} = ?`).join(' AND ')}`;
    let changed = 0;
    for await (const batch of rows) {
      const last = lastRowPerKey(batch, keyIndexes);
      changed += (
        await this.tx.runEach(
          deleteByKey,
          last.map((row) => keyIndexes.map((i) => row[i])),
        )
      ).changes;
      changed += (await this.tx.runEach(this.insert, this.stamped(last))).changes;
    }
    return changed;
  }

  /** The rows with `now` appended, in place: the batch is the loader's own and not used after. */
  private stamped(batch: string[][]): SqlParam[][] {
    for (const row of batch) row.push(this.target.now);
    return batch;
  }
}

class CopyRowWriter implements BatchWriter<string[]> {
  constructor(
    private readonly tx: TransactionExecutor,
    private readonly copyFrom: (sql: string, data: AsyncIterable<string>) => Promise<number>,
    private readonly target: WriteTarget,
  ) {}

  append(records: AsyncIterable<string[]>): Promise<number> {
    const columns = [...this.target.columns, TIMESTAMP_COLUMN];
    return this.copyFrom(
      `COPY ${this.target.table} (${list(columns)}) FROM STDIN ${copyOptions(this.target.columns)}`,
      copyText(records, `,${copyValue(this.target.now)}`),
    );
  }

  /**
   * The file is copied into a temporary stage numbered in file order; the table's rows of the
   * stage's keys are deleted, and the stage's last row of each key inserted, in file order.
   */
  async upsert(records: AsyncIterable<string[]>, keyColumns: readonly string[], table: TableState): Promise<number> {
    // a large key sort or hash join stays in memory rather than spilling to disk (this transaction only)
    await this.tx.run(`SET LOCAL work_mem = '${KEYED_LOAD_WORK_MEM}'`);
    if (table === 'new') return this.copyThenDeduplicate(records, keyColumns);
    const stage = quoteIdentifier(`gex_stage_${randomBytes(8).toString('hex')}`);
    const staged = this.target.columns.map((_, i) => `s${i}`);
    const stagedKey = keyColumns.map((k) => staged[this.target.columns.indexOf(k)]);
    const sameKey = (a: string, aKey: readonly string[], s: string) =>
      aKey.map((k, i) => `${a}.${quoteIdentifier(k)} = ${s}.${quoteIdentifier(stagedKey[i])}`).join(' AND ');
    await this.tx.run(
      `CREATE TEMPORARY TABLE ${stage} (${staged.map((c) => `${quoteIdentifier(c)} TEXT NOT NULL`).join(', ')}, gex_seq BIGINT NOT NULL)`,
    );
    await this.copyFrom(
      `COPY ${stage} (${list([...staged, 'gex_seq'])}) FROM STDIN ${copyOptions(staged)}`,
      copyText(records, null),
    );
    const deleted =
      table === 'empty'
        ? { changes: 0 }
        : await this.tx.run(
            `DELETE FROM ${this.target.table} AS t USING ${stage} AS s WHERE ${sameKey('t', keyColumns, 's')}`,
          );
    // most files have each key once: the last-row-per-key filter (an anti-join) only when one is there twice
    const repeated = await this.tx.get(
      `SELECT 1 AS repeated FROM ${stage} GROUP BY ${list(stagedKey)} HAVING COUNT(*) > 1 LIMIT 1`,
    );
    // Without a repeated key the stage is read as it is: a plain scan of a temporary table returns
    // its rows in the order one COPY wrote them (temporary tables are never scanned in parallel nor
    // synchronised with other scans), which saves sorting the whole file. A join may reorder: sorted.
    const lastOfKey = repeated
      ? ` WHERE NOT EXISTS (SELECT 1 FROM ${stage} AS later WHERE ${sameKey('later', stagedKey, 's')} AND later.gex_seq > s.gex_seq) ORDER BY s.gex_seq`
      : '';
    const inserted = await this.tx.run(
      `INSERT INTO ${this.target.table} (${list([...this.target.columns, TIMESTAMP_COLUMN])}) SELECT ${staged.map((c) => `s.${quoteIdentifier(c)}`).join(', ')}, ? FROM ${stage} AS s${lastOfKey}`,
      [this.target.now],
    );
    await this.tx.run(`DROP TABLE ${stage}`);
    return deleted.changes + inserted.changes;
  }

  /**
   * A new table: the file is copied straight in, then the key index built as a unique one, which
   * proves in the same sort that no key repeats. When one does, every row with a later row of its
   * key is deleted first: a table created in this transaction and filled by one COPY holds its
   * rows in file order, so `ctid` order is file order (reads rely on that order too).
   */
  private async copyThenDeduplicate(records: AsyncIterable<string[]>, keyColumns: readonly string[]): Promise<number> {
    const inserted = await this.append(records);
    await this.tx.run('SAVEPOINT gex_unique_key');
    try {
      await this.tx.run(createKeyIndex(this.target, keyColumns, true));
      await this.tx.run('RELEASE SAVEPOINT gex_unique_key');
      return inserted;
    } catch (e) {
      if (!(e instanceof UniqueViolation)) throw e;
      await this.tx.run('ROLLBACK TO SAVEPOINT gex_unique_key');
    }
    const sameKey = keyColumns.map((k) => `earlier.${quoteIdentifier(k)} = later.${quoteIdentifier(k)}`).join(' AND ');
    const deleted = await this.tx.run(
      `DELETE FROM ${this.target.table} AS earlier USING ${this.target.table} AS later WHERE ${sameKey} AND earlier.ctid < later.ctid`,
    );
    await this.tx.run(createKeyIndex(this.target, keyColumns, true));
    return inserted - deleted.changes;
  }
}

/**
 * COPY's CSV options: `,` and `"` (the defaults), and no value read as NULL — an unquoted empty
 * value is '' (the columns are NOT NULL DEFAULT ''), as the CSV scanner reads it.
 */
function copyOptions(columns: readonly string[]): string {
  return `(FORMAT csv, FORCE_NOT_NULL (${list(columns)}))`;
}

/**
 * Records as COPY's input: each record's text, then `suffix` (the `_timestamp` value) or, with
 * none, its number in the file, and a line break. A record always ends with a value of ours, so
 * none is ever `\.` alone on a line (COPY's end-of-data marker).
 */
async function* copyText(records: AsyncIterable<string[]>, suffix: string | null): AsyncGenerator<string> {
  let seq = 0;
  for await (const batch of records) {
    let text = '';
    if (suffix === null) for (const record of batch) text += `${record},${seq++}\n`;
    else for (const record of batch) text += `${record}${suffix}\n`;
    yield text;
  }
}

/** Within a batch, the last row of each key, in the order of those last rows. */
function lastRowPerKey(rows: string[][], keyIndexes: number[]): string[][] {
  const byKey = new Map<string, string[]>();
  const single = keyIndexes.length === 1 ? keyIndexes[0] : -1;
  for (const row of rows) {
    const key = single >= 0 ? row[single] : JSON.stringify(keyIndexes.map((i) => row[i]));
    byKey.delete(key); // re-inserted at the end: rows keep the order of their last occurrence
    byKey.set(key, row);
  }
  return byKey.size === rows.length ? rows : [...byKey.values()];
}

/**
 * A row as a CSV record's text (delimiter `,`, quote `"`): a value is quoted when it holds a quote,
 * a comma or a line break, or is empty or `\.` (harmless with FORCE_NOT_NULL and a value of ours
 * after it, but then the text is plain CSV anywhere); quotes are doubled. Backslashes and any
 * unicode are plain data in this format. NUL never gets here (the CSV reader refuses it).
 */
export function csvRecordText(row: readonly string[]): string {
  let line = copyValue(row[0]);
  for (let i = 1; i < row.length; i++) line += `,${copyValue(row[i])}`;
  return line;
}

const NEEDS_QUOTES = /[",\r\n]|^$|^\\\.$/;

function copyValue(value: string): string {
  if (!NEEDS_QUOTES.test(value)) return value;
  return value.includes('"') ? `"${value.replaceAll('"', '""')}"` : `"${value}"`;
}
