import { rm } from 'node:fs/promises';
import path from 'node:path';
import { CsvFile } from '../csv-file.js';
import type { SpoolBatch } from '../spool.js';
import { TableNameError, type TableNameCheck } from '../table-files.js';
import type { Structure } from './structure.js';
import { TableReplay } from './table-replay.js';

/** Data errors kept for the end; a run with more gives up its drafts (the replay logs them all). */
const MAX_KEPT_ERRORS = 10_000;

/**
 * Tables written while pages still arrive, betting that the structure learned so far is final —
 * true for most APIs after the first page. GE cannot write before it has analysed everything
 * (headers cover the whole run), so the parser keeps its disk queue anyway; the drafts replay
 * each batch at once against a copy of the structure taken at the first batch. If the structure
 * changes afterwards, the drafts are dropped and the queue is replayed at the end as usual; if not,
 * replaying the queue would write the very same bytes, and the drafts are the tables.
 */
export class DraftTables {
  private readonly replay: TableReplay;
  private readonly changes: number;
  private readonly signature: string;
  private readonly dataErrors: string[] = [];
  private readonly files: CsvFile[] = [];
  private dropped = false;

  constructor(
    private readonly structure: Structure,
    aliases: Map<string, string>,
    dir: string,
    checkTableName?: TableNameCheck,
  ) {
    this.changes = structure.changes;
    this.signature = structure.signature();
    const open = (): CsvFile => {
      const file = new CsvFile(path.join(dir, `draft-${this.files.length + 1}.csv`));
      this.files.push(file);
      return file;
    };
    this.replay = new TableReplay(
      structure.clone(),
      new Map(aliases),
      open,
      (message) => this.keepError(message),
      checkTableName,
    );
  }

  /** false once the drafts are dropped: the structure changed or writing failed. */
  get alive(): boolean {
    return !this.dropped;
  }

  /** Writes a batch the parser just analysed (and queued). */
  write(batch: SpoolBatch): void {
    if (this.dropped) return;
    if (this.structure.changes !== this.changes) return this.drop();
    try {
      this.replay.writeBatch(batch);
    } catch (error) {
      // a table once created is created by the final replay too (its path only ever gains a table):
      // an unwritable name fails the run now, before more pages are fetched
      if (error instanceof TableNameError) throw error;
      // any other error here may not be one at the end (the structure can still change): the replay decides
      this.drop();
    }
  }

  async flush(): Promise<void> {
    if (this.dropped) return;
    try {
      for (const table of this.replay.tables.values()) await table.drained();
    } catch {
      this.drop();
    }
  }

  /**
   * The finished tables, if the structure is still the one they were written against; then the
   * data errors met while writing are reported, in order, as the replay would have. Else null.
   */
  async finish(onDataError: (message: string) => void): Promise<Map<string, CsvFile> | null> {
    if (this.dropped || this.structure.changes !== this.changes || this.structure.signature() !== this.signature) {
      this.drop();
      return null;
    }
    try {
      for (const table of this.replay.tables.values()) await table.close();
    } catch {
      this.drop();
      return null;
    }
    for (const message of this.dataErrors) onDataError(message);
    return this.replay.tables;
  }

  private keepError(message: string): void {
    if (this.dataErrors.length >= MAX_KEPT_ERRORS) this.drop();
    else this.dataErrors.push(message);
  }

  /** Stops drafting and frees the disk space the drafts took. */
  private drop(): void {
    if (this.dropped) return;
    this.dropped = true;
    this.dataErrors.length = 0;
    for (const file of this.files) {
      file.destroy();
      rm(file.file, { force: true }).catch(() => undefined); // the folder goes with the spool anyway
    }
  }
}
