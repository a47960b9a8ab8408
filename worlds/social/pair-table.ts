/**
 * A hash table from (item, user) pairs to a uint32 value and a uint8 tag: open addressing with
 * linear probing over typed arrays, grown at half load. The world keeps "who has seen what" and
 * "who reacted to what" in two of these: one lookup answers "has Lin seen Wei's repost?" in O(1)
 * at any scale, and tens of millions of pairs take 13 bytes a slot, no objects.
 */
export class PairTable {
  /** item + 1 per slot (0: empty). */
  private items: Uint32Array;
  private users: Uint32Array;
  private values: Uint32Array;
  private tags: Uint8Array;
  private mask: number;
  size = 0;

  constructor(capacity = 1024) {
    let c = 16;
    while (c < capacity * 2) c *= 2;
    this.items = new Uint32Array(c);
    this.users = new Uint32Array(c);
    this.values = new Uint32Array(c);
    this.tags = new Uint8Array(c);
    this.mask = c - 1;
  }

  private slot(item: number, user: number): number {
    let h = Math.imul(item ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(user + 0x7f4a7c15, 0x85ebca77);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 13;
    let s = h & this.mask;
    const key = item + 1;
    for (;;) {
      const k = this.items[s]!;
      if (k === 0 || (k === key && this.users[s] === user)) return s;
      s = (s + 1) & this.mask;
    }
  }

  has(item: number, user: number): boolean {
    return this.items[this.slot(item, user)] !== 0;
  }

  /** The pair's value, or -1 when the pair is absent. */
  get(item: number, user: number): number {
    const s = this.slot(item, user);
    return this.items[s] === 0 ? -1 : this.values[s]!;
  }

  /** The pair's tag, or -1 when the pair is absent. */
  tag(item: number, user: number): number {
    const s = this.slot(item, user);
    return this.items[s] === 0 ? -1 : this.tags[s]!;
  }

  /** Adds the pair if it is new (returns true); an existing pair keeps its first value and tag. */
  add(item: number, user: number, value: number, tag: number): boolean {
    let s = this.slot(item, user);
    if (this.items[s] !== 0) return false;
    if ((this.size + 1) * 2 > this.items.length) {
      this.rehash(this.items.length * 2);
      s = this.slot(item, user);
    }
    this.items[s] = item + 1;
    this.users[s] = user;
    this.values[s] = value;
    this.tags[s] = tag;
    this.size++;
    return true;
  }

  /** Adds 1 to the pair's value (a new pair starts at 0) and returns the value it had before. */
  increment(item: number, user: number): number {
    const s = this.slot(item, user);
    if (this.items[s] === 0) {
      this.add(item, user, 1, 0);
      return 0;
    }
    return this.values[s]!++;
  }

  /** Calls `f` for every pair, in slot order (callers sort when order matters). */
  forEach(f: (item: number, user: number, value: number, tag: number) => void): void {
    for (let s = 0; s < this.items.length; s++) if (this.items[s] !== 0) f(this.items[s]! - 1, this.users[s]!, this.values[s]!, this.tags[s]!);
  }

  clone(): PairTable {
    const t = Object.create(PairTable.prototype) as PairTable;
    t.items = this.items.slice();
    t.users = this.users.slice();
    t.values = this.values.slice();
    t.tags = this.tags.slice();
    t.mask = this.mask;
    t.size = this.size;
    return t;
  }

  bytes(): number {
    return this.items.length * 13;
  }

  private rehash(capacity: number): void {
    const { items, users, values, tags } = this;
    this.items = new Uint32Array(capacity);
    this.users = new Uint32Array(capacity);
    this.values = new Uint32Array(capacity);
    this.tags = new Uint8Array(capacity);
    this.mask = capacity - 1;
    for (let s = 0; s < items.length; s++) {
      if (items[s] === 0) continue;
      const t = this.slot(items[s]! - 1, users[s]!);
      this.items[t] = items[s]!;
      this.users[t] = users[s]!;
      this.values[t] = values[s]!;
      this.tags[t] = tags[s]!;
    }
  }
}
