/**
 * What a user has seen, in the order it reached them: the exact record of the world (sim.ts keeps
 * for every (item, user) pair when and how it was first seen), read out for one user. A room's
 * per-user feed view and "has Lin seen Wei's repost?" are both this record.
 */
import type { SocialSim } from "./sim.js";
import { VIA_NAMES } from "./sim.js";

export interface SeenItem {
  /** The item's index in the world's item table. */
  readonly item: number;
  /** When the user first saw it. */
  readonly time: number;
  /** How: in their feed, as a notification, as context of another item, or their own. */
  readonly via: (typeof VIA_NAMES)[number];
}

/** Every item `user` has seen (their own included), by time first seen, then by item. */
export function itemsSeenBy(sim: SocialSim, user: number): SeenItem[] {
  const out: SeenItem[] = [];
  for (let i = 0; i < sim.items.length; i++) {
    const time = sim.seenAt(user, i);
    if (time >= 0) out.push({ item: i, time, via: VIA_NAMES[sim.seenVia(user, i)] ?? "feed" });
  }
  return out.sort((a, b) => a.time - b.time || a.item - b.item);
}
