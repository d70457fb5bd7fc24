import { stringifyExact, type JsonValue } from '../../json/index.js';

export interface ReadCacheLimits {
  /** total bytes of cached bodies (default 32 MiB); the least recently used go first */
  maxBytes?: number;
  /** bodies larger than this are never cached (default 1 MiB) */
  maxEntryBytes?: number;
}

interface Entry {
  marker: string;
  value: unknown;
  bytes: number;
}

/**
 * Values derived from stored data — encoded response bodies of GET routes, token lookups — reused
 * while the store reports no change since they were built (`changeMarker`). Decoding stored JSON
 * exactly and encoding it again is most of the cost of a configuration detail, and clients
 * (orchestrators, runners, UIs) read the same configurations far more often than anyone changes
 * them. Any committed write, by any process, invalidates every entry; a backend that cannot tell
 * (null marker, PostgreSQL) gets no caching at all.
 */
export class ReadCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxEntryBytes: number;

  constructor(
    private readonly changeMarker: () => Promise<string | null>,
    limits: ReadCacheLimits = {},
  ) {
    this.maxBytes = limits.maxBytes ?? 32 * 1024 * 1024;
    this.maxEntryBytes = limits.maxEntryBytes ?? 1024 * 1024;
  }

  /**
   * The encoded JSON body for `key`, which must name everything the body depends on but the stored
   * data (the token and the URL).
   */
  body(key: string, build: () => Promise<JsonValue>): Promise<Buffer> {
    return this.value(
      `body ${key}`,
      async () => Buffer.from(stringifyExact(await build())),
      (body) => body.length,
    );
  }

  /**
   * The value for `key`, built when missing or stale; `bytes` tells its size, or null to keep it
   * out of the cache. The marker is read before `build` runs, so a write racing with `build` leaves
   * an entry tagged with the older marker, which the next read discards.
   */
  async value<T>(key: string, build: () => Promise<T>, bytes: (value: T) => number | null): Promise<T> {
    const marker = await this.changeMarker();
    if (marker !== null) {
      const hit = this.entries.get(key);
      if (hit && hit.marker === marker) {
        // re-insert: Map order is the recency order
        this.entries.delete(key);
        this.entries.set(key, hit);
        return hit.value as T;
      }
    }
    const value = await build();
    const size = marker === null ? null : bytes(value);
    if (marker !== null && size !== null) this.remember(key, { marker, value, bytes: size });
    return value;
  }

  get size(): number {
    return this.entries.size;
  }

  private remember(key: string, entry: Entry): void {
    this.forget(key);
    if (entry.bytes > this.maxEntryBytes) return;
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    for (const oldest of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.forget(oldest);
    }
  }

  private forget(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.bytes -= old.bytes;
  }
}
