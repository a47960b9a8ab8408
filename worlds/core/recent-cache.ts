/**
 * A small cache of the most recent entries, evicting the oldest, in fixed arrays.
 *
 * Why not a Map with delete-the-first-key: a Map that keeps inserting and deleting rehashes into
 * a new table every so often, and V8 links each old table to its successor (for live iterators).
 * Once an old table has been promoted, that link keeps the young successor, and the values in
 * it, alive through every scavenge until the next full collection: the values are promoted too,
 * and a long benchmark run promoted tens of megabytes of dead stories that way (tried again
 * without it: the ToMi val run's garbage collection took twice as long). Fixed arrays never move. Lookups compare keys with `===` (a story's text is usually the very same string
 * for all its questions, so most comparisons are a pointer check).
 */
export class RecentCache<K, V> {
  private readonly keys: (K | undefined)[];
  private readonly values: (V | undefined)[];
  private next = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`RecentCache capacity must be a positive integer, got ${capacity}`);
    this.keys = new Array<K | undefined>(capacity).fill(undefined);
    this.values = new Array<V | undefined>(capacity).fill(undefined);
  }

  get(key: K): V | undefined {
    // Newest first: questions about one story come together.
    for (let k = 1; k <= this.capacity; k++) {
      const i = (this.next - k + this.capacity) % this.capacity;
      if (this.keys[i] === key && this.values[i] !== undefined) return this.values[i];
    }
    return undefined;
  }

  set(key: K, value: V): void {
    for (let i = 0; i < this.capacity; i++) {
      if (this.keys[i] === key && this.values[i] !== undefined) {
        this.values[i] = value;
        return;
      }
    }
    this.keys[this.next] = key;
    this.values[this.next] = value;
    this.next = (this.next + 1) % this.capacity;
  }

  clear(): void {
    this.keys.fill(undefined);
    this.values.fill(undefined);
    this.next = 0;
  }
}
