/**
 * The order a GRPO run draws its decision points in: position k of the run (its cursor) names
 * one point, the same on a resume, whatever happened between.
 *
 * - `none`: a seeded shuffle of all points, a new one every pass over the data. Every point is
 *   drawn once a pass, so each kind of question weighs as much as it is common.
 * - `type`: every kind of point (a benchmark question's type: ToMi's first_order_tom, reality,
 *   ...) in equal shares. Each cycle of T draws takes one point of each of the T kinds, in a
 *   seeded order; within a kind, a seeded shuffle of its points, a new one every pass over them.
 *   Why: under a right-or-wrong reward, a rule that is right on the common kinds earns most of
 *   the reward. In a ToMi room most questions are answered by where the object is now (true
 *   belief, reality, second order without a false belief), and self-play drawing them as they
 *   come bought that rule with the false-belief questions (docs/self-play.md, Results). In equal
 *   shares the rule is right on half of the draws, not three quarters.
 */
import { Rng } from "../../worlds/core/rng.js";
import type { PointBalance } from "./config.js";
import type { PointSource } from "./decision-point.js";

/** The kind of point `index` is, for balance `type`: a source that names none is one kind. */
function kindOf(source: PointSource, index: number): string {
  return source.kind?.(index) ?? "";
}

/** Positions cursor .. cursor + count - 1 of the run's order over `source`'s points. */
export type PointOrder = (cursor: number, count: number) => number[];

export function pointOrder(source: PointSource, balance: PointBalance, seed: number): PointOrder {
  if (balance === "none") return (cursor, count) => shuffledAt(source.size, cursor, count, `grpo-order:${seed}`);
  const byKind = new Map<string, number[]>();
  for (let i = 0; i < source.size; i++) {
    const kind = kindOf(source, i);
    const list = byKind.get(kind);
    if (list) list.push(i);
    else byKind.set(kind, [i]);
  }
  // Sorted, so that the order depends on the data and the seed, not on which kind came first.
  const kinds = [...byKind.keys()].sort();
  const T = kinds.length;
  return (cursor, count) => {
    if (count <= 0) return [];
    // Every cycle draws each kind once, so a kind's draws in cycles first..last are positions
    // first..last of its own seeded order: one call per kind shuffles each pass once.
    const first = Math.floor(cursor / T);
    const last = Math.floor((cursor + count - 1) / T);
    const drawn = new Map(kinds.map((kind) => [kind, shuffledAt(byKind.get(kind)!.length, first, last - first + 1, `grpo-order:${seed}:${kind}`)]));
    const out: number[] = [];
    let cycleKinds: string[] = [];
    for (let k = cursor; k < cursor + count; k++) {
      const cycle = Math.floor(k / T);
      if (k === cursor || k % T === 0) cycleKinds = Rng.seeded(`grpo-kinds:${seed}:${cycle}`).shuffle(kinds);
      const kind = cycleKinds[k % T]!;
      out.push(byKind.get(kind)![drawn.get(kind)![cycle - first]!]!);
    }
    return out;
  };
}

/** Positions cursor .. cursor + count - 1 of `size` items' seeded order: a new shuffle every pass, made once per pass touched. */
function shuffledAt(size: number, cursor: number, count: number, seed: string): number[] {
  const out: number[] = [];
  let pass = -1;
  let order: number[] = [];
  for (let k = cursor; k < cursor + count; k++) {
    const p = Math.floor(k / size);
    if (p !== pass) {
      pass = p;
      order = Rng.seeded(`${seed}:${p}`).shuffle(Array.from({ length: size }, (_, i) => i));
    }
    out.push(order[k % size]!);
  }
  return out;
}
