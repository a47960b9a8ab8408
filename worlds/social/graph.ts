/**
 * The follow graph in compressed sparse rows, both ways: whom each user follows (`following`,
 * rows by follower) and who follows each user (`followers`, rows by followee), each row sorted.
 * A million users with twenty follows each are 2 x 20 M uint32 plus offsets: 168 MB, no objects.
 */

export interface FollowGraph {
  readonly size: number;
  /** followingStart[u] .. followingStart[u + 1] indexes `following`. */
  readonly followingStart: Uint32Array;
  readonly following: Uint32Array;
  readonly followerStart: Uint32Array;
  readonly followers: Uint32Array;
}

/**
 * Builds the graph from `count` edges `from[i]` follows `to[i]`. Self-follows and repeated
 * edges are dropped. O(E + n), one pass per direction (counting sort), plus a sort of each row.
 */
export function buildFollowGraph(size: number, from: Uint32Array, to: Uint32Array, count = from.length): FollowGraph {
  if (to.length < count || from.length < count) throw new RangeError(`edge arrays shorter than ${count}`);
  const start = new Uint32Array(size + 1);
  for (let i = 0; i < count; i++) {
    const a = from[i]!;
    const b = to[i]!;
    if (a >= size || b >= size) throw new RangeError(`edge ${i}: user ${a >= size ? a : b} not below ${size}`);
    if (a !== b) start[a + 1]!++;
  }
  for (let u = 0; u < size; u++) start[u + 1]! += start[u]!;
  const raw = new Uint32Array(start[size]!);
  const fill = start.slice(0, size);
  for (let i = 0; i < count; i++) {
    const a = from[i]!;
    const b = to[i]!;
    if (a !== b) raw[fill[a]!++] = b;
  }
  // Sort each row and drop repeats, compacting in place.
  const followingStart = new Uint32Array(size + 1);
  let w = 0;
  for (let u = 0; u < size; u++) {
    const row = raw.subarray(start[u]!, start[u + 1]!);
    row.sort();
    followingStart[u] = w;
    for (let i = 0; i < row.length; i++) if (i === 0 || row[i] !== row[i - 1]) raw[w++] = row[i]!;
  }
  followingStart[size] = w;
  const following = raw.slice(0, w);
  // Followers by counting sort over the followees; iterating followers in increasing order keeps rows sorted.
  const followerStart = new Uint32Array(size + 1);
  for (let i = 0; i < w; i++) followerStart[following[i]! + 1]!++;
  for (let u = 0; u < size; u++) followerStart[u + 1]! += followerStart[u]!;
  const followers = new Uint32Array(w);
  const next = followerStart.slice(0, size);
  for (let u = 0; u < size; u++) {
    for (let i = followingStart[u]!; i < followingStart[u + 1]!; i++) followers[next[following[i]!]!++] = u;
  }
  return { size, followingStart, following, followerStart, followers };
}

export function followingOf(g: FollowGraph, u: number): Uint32Array {
  return g.following.subarray(g.followingStart[u]!, g.followingStart[u + 1]!);
}

export function followersOf(g: FollowGraph, u: number): Uint32Array {
  return g.followers.subarray(g.followerStart[u]!, g.followerStart[u + 1]!);
}

export function followerCount(g: FollowGraph, u: number): number {
  return g.followerStart[u + 1]! - g.followerStart[u]!;
}

export function followingCount(g: FollowGraph, u: number): number {
  return g.followingStart[u + 1]! - g.followingStart[u]!;
}

/** Does `a` follow `b`? Binary search in a's sorted row. */
export function follows(g: FollowGraph, a: number, b: number): boolean {
  let lo = g.followingStart[a]!;
  let hi = g.followingStart[a + 1]!;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = g.following[mid]!;
    if (v === b) return true;
    if (v < b) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

/** The edges as [follower, followee] pairs (small graphs: files and tests). */
export function edgeList(g: FollowGraph): [number, number][] {
  const out: [number, number][] = [];
  for (let u = 0; u < g.size; u++) for (let i = g.followingStart[u]!; i < g.followingStart[u + 1]!; i++) out.push([u, g.following[i]!]);
  return out;
}

export function graphBytes(g: FollowGraph): number {
  return g.followingStart.byteLength + g.following.byteLength + g.followerStart.byteLength + g.followers.byteLength;
}
