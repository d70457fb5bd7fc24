/**
 * Prepared statements by SQL text, least recently used dropped beyond `capacity`: the texts are
 * few for configurations, but Storage tables add texts per table, and a server runs for months.
 */
export class StatementCache<S> {
  private readonly entries = new Map<string, S>();

  constructor(
    private readonly prepare: (sql: string) => S,
    readonly capacity = 500,
  ) {}

  get(sql: string): S {
    let statement = this.entries.get(sql);
    if (statement !== undefined) {
      // a Map keeps insertion order: re-inserting marks the text as the most recently used
      this.entries.delete(sql);
    } else {
      statement = this.prepare(sql);
      if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(sql, statement);
    return statement;
  }

  get size(): number {
    return this.entries.size;
  }
}
