import TinyQueue from 'tinyqueue';

interface Item<K> {
  due: number;
  key: K;
  /** which setting of the key this item is: an older one is stale and skipped */
  stamp: number;
}

/**
 * Keys ordered by when they are due (a binary heap): the earliest is seen in O(1), a key is
 * (re)set or removed in O(log n). A key set again leaves its old item in the heap, skipped when it
 * comes up; the heap is rebuilt once stale items outnumber live ones, so it never grows past twice
 * the keys it holds.
 */
export class DueQueue<K> {
  private readonly current = new Map<K, Item<K>>();
  private heap = new TinyQueue<Item<K>>([], (a, b) => a.due - b.due);
  private stamps = 0;

  /** how many keys are due at some time */
  get size(): number {
    return this.current.size;
  }

  /** Makes `key` due at `due` (epoch ms), or at no time (undefined: removed). */
  set(key: K, due: number | undefined): void {
    if (due === undefined) {
      this.current.delete(key);
    } else {
      const item = { due, key, stamp: ++this.stamps };
      this.current.set(key, item);
      this.heap.push(item);
    }
    if (this.heap.length > 2 * this.current.size + 64)
      this.heap = new TinyQueue([...this.current.values()], (a, b) => a.due - b.due);
  }

  /** When the earliest key is due; undefined when none is queued. */
  earliest(): number | undefined {
    for (let top = this.heap.peek(); top; top = this.heap.peek()) {
      if (this.current.get(top.key) === top) return top.due;
      this.heap.pop(); // stale
    }
    return undefined;
  }

  /** The earliest key due at or before `now`, taken out of the queue; undefined when none is. */
  takeDue(now: number): K | undefined {
    for (;;) {
      const top = this.heap.peek();
      if (!top || top.due > now) return undefined;
      this.heap.pop();
      if (this.current.get(top.key) !== top) continue; // stale
      this.current.delete(top.key);
      return top.key;
    }
  }
}
