/**
 * Every post and interaction, one column per attribute, growing by doubling. An item is a root
 * post, or a reaction to an item (comment, repost, like) one level deeper: reactions to the root
 * are depth 0, reactions to those depth 1, and so on (the root itself is depth -1).
 *
 * Text is stored only when someone wrote it (a person, a model, an imported file). What the
 * latent user model writes is a pure function of the item's columns and its `textSeed`, so it is
 * rendered when read (`text.ts`): a cascade over a million users keeps no strings.
 */

export const POST = 0;
export const COMMENT = 1;
export const REPOST = 2;
export const LIKE = 3;
export type ItemKind = typeof POST | typeof COMMENT | typeof REPOST | typeof LIKE;

export const KIND_NAMES = ["post", "comment", "repost", "like"] as const;
export type KindName = (typeof KIND_NAMES)[number];
/** Id prefixes: p12 is item 12, a post; c13 a comment, r14 a repost, l15 a like. */
const PREFIX = "pcrl";

export function itemId(kind: number, index: number): string {
  return `${PREFIX[kind]}${index}`;
}

const ID_RE = /^([pcrl])(0|[1-9][0-9]{0,9})$/;

/** The index an id names, or -1 when it is not an id of an existing item of the right kind. */
export function parseItemId(items: ItemTable, id: string): number {
  const m = ID_RE.exec(id);
  if (!m) return -1;
  const i = Number(m[2]);
  return i < items.length && PREFIX[items.kind[i]!] === m[1] ? i : -1;
}

export class ItemTable {
  length = 0;
  kind: Uint8Array;
  author: Uint32Array;
  /** -1 for a root post. */
  parent: Int32Array;
  root: Uint32Array;
  depth: Int16Array;
  time: Uint32Array;
  topic: Uint8Array;
  /** The stance the text takes on its topic (its author's, when written). */
  stance: Float32Array;
  /** Seeds the latent model's wording of the text (text.ts). */
  textSeed: Uint32Array;
  /** Direct reactions received, by kind. */
  comments: Uint32Array;
  reposts: Uint32Array;
  likes: Uint32Array;
  /** Texts someone wrote; an item without one has its text rendered from the latent model. */
  texts: Map<number, string>;

  constructor(capacity = 64) {
    const c = Math.max(1, capacity);
    this.kind = new Uint8Array(c);
    this.author = new Uint32Array(c);
    this.parent = new Int32Array(c);
    this.root = new Uint32Array(c);
    this.depth = new Int16Array(c);
    this.time = new Uint32Array(c);
    this.topic = new Uint8Array(c);
    this.stance = new Float32Array(c);
    this.textSeed = new Uint32Array(c);
    this.comments = new Uint32Array(c);
    this.reposts = new Uint32Array(c);
    this.likes = new Uint32Array(c);
    this.texts = new Map();
  }

  get capacity(): number {
    return this.kind.length;
  }

  /** Appends an item and returns its index; a reaction counts on its parent. */
  add(kind: ItemKind, author: number, parent: number, time: number, topic: number, stance: number, textSeed: number, text?: string): number {
    if (this.length === this.kind.length) this.grow(this.length * 2);
    const i = this.length++;
    this.kind[i] = kind;
    this.author[i] = author;
    this.parent[i] = parent;
    this.time[i] = time;
    this.topic[i] = topic;
    this.stance[i] = stance;
    this.textSeed[i] = textSeed >>> 0;
    if (parent < 0) {
      this.root[i] = i;
      this.depth[i] = -1;
    } else {
      this.root[i] = this.root[parent]!;
      this.depth[i] = this.depth[parent]! + 1;
      if (kind === COMMENT) this.comments[parent]!++;
      else if (kind === REPOST) this.reposts[parent]!++;
      else if (kind === LIKE) this.likes[parent]!++;
    }
    if (text !== undefined) this.texts.set(i, text);
    return i;
  }

  id(i: number): string {
    return itemId(this.kind[i]!, i);
  }

  /** Reactions an item has received, all kinds. */
  engagement(i: number): number {
    return this.comments[i]! + this.reposts[i]! + this.likes[i]!;
  }

  clone(): ItemTable {
    const t = new ItemTable(this.capacity);
    t.length = this.length;
    t.kind.set(this.kind);
    t.author.set(this.author);
    t.parent.set(this.parent);
    t.root.set(this.root);
    t.depth.set(this.depth);
    t.time.set(this.time);
    t.topic.set(this.topic);
    t.stance.set(this.stance);
    t.textSeed.set(this.textSeed);
    t.comments.set(this.comments);
    t.reposts.set(this.reposts);
    t.likes.set(this.likes);
    t.texts = new Map(this.texts);
    return t;
  }

  bytes(): number {
    // 4 + 4 + 4 + 4 + 2 + 4 + 1 + 1 + 4 + 4 + 4 + 4 bytes per slot.
    return this.capacity * 40;
  }

  private grow(capacity: number): void {
    const grow = <T extends Uint8Array | Uint32Array | Int32Array | Int16Array | Float32Array>(a: T, make: (n: number) => T): T => {
      const b = make(capacity);
      b.set(a);
      return b;
    };
    this.kind = grow(this.kind, (n) => new Uint8Array(n));
    this.author = grow(this.author, (n) => new Uint32Array(n));
    this.parent = grow(this.parent, (n) => new Int32Array(n));
    this.root = grow(this.root, (n) => new Uint32Array(n));
    this.depth = grow(this.depth, (n) => new Int16Array(n));
    this.time = grow(this.time, (n) => new Uint32Array(n));
    this.topic = grow(this.topic, (n) => new Uint8Array(n));
    this.stance = grow(this.stance, (n) => new Float32Array(n));
    this.textSeed = grow(this.textSeed, (n) => new Uint32Array(n));
    this.comments = grow(this.comments, (n) => new Uint32Array(n));
    this.reposts = grow(this.reposts, (n) => new Uint32Array(n));
    this.likes = grow(this.likes, (n) => new Uint32Array(n));
  }
}
