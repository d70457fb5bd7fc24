import type { ScheduleRecord, ScheduleRepository } from './schedule-repository.js';

/** schedules read per query when catching up */
export const MIRROR_PAGE = 500;

export interface MirrorChanges {
  /** new or changed schedules (stopped and disabled ones included), a page at a time */
  changed(records: ScheduleRecord[]): Promise<void>;
  /** a schedule that was deleted */
  removed(id: number): void;
}

/**
 * The schedules of every project as this process last read them, kept up to date from any
 * process's changes without reading them all: one row (the latest revision) per refresh while
 * nothing changes; after a change, the schedules whose revision is newer, and — when the number of
 * schedules is not the number known — their ids, to notice deleted ones.
 */
export class ScheduleMirror {
  /** the revision everything up to which has been read; -1: nothing read yet */
  private revision = -1;
  private readonly known = new Map<number, number>();

  constructor(private readonly schedules: ScheduleRepository) {}

  /** whether the first refresh has read every schedule */
  get loaded(): boolean {
    return this.revision >= 0;
  }

  /** how many schedules are known */
  get size(): number {
    return this.known.size;
  }

  /** Reads what changed since the last refresh; false when nothing did (one query). */
  async refresh(changes: MirrorChanges): Promise<boolean> {
    // read first: every change up to this revision has committed (revisions are taken under a row lock)
    const revision = await this.schedules.revision();
    if (revision === this.revision) return false;
    let cursor: ScheduleRecord | undefined;
    for (;;) {
      const page = await this.schedules.changedSince(this.revision, MIRROR_PAGE, cursor);
      const fresh = page.filter((record) => this.known.get(record.id) !== record.revision);
      if (fresh.length > 0) await changes.changed(fresh);
      // known once taken in: a page that failed is read again at the next refresh
      for (const record of fresh) this.known.set(record.id, record.revision);
      if (page.length < MIRROR_PAGE) break;
      cursor = page[page.length - 1];
    }
    if ((await this.schedules.count()) !== this.known.size) {
      const ids = new Set(await this.schedules.ids());
      for (const id of [...this.known.keys()])
        if (!ids.has(id)) {
          this.known.delete(id);
          changes.removed(id);
        }
    }
    this.revision = revision;
    return true;
  }
}
