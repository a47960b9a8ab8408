import { FNV_OFFSET_BASIS, FNV_PRIME, hashString } from "../core/rng.js";

/** A stable id for a story's socialized context: 64 bits of hash of its text. */
export function contextIdOf(story: string): string {
  // Two 32-bit FNV-1a hashes (hashString's): of the text, and of `${length}:${text}`. Both are
  // taken in one pass over the text, the second continuing from its prefix's hash: a run hashes
  // every story it replays, and in V8's baseline code each character costs a few calls.
  let a = FNV_OFFSET_BASIS;
  let b = hashString(`${story.length}:`);
  for (let i = 0; i < story.length; i++) {
    const c = story.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME);
    b = Math.imul(b ^ c, FNV_PRIME);
  }
  return `ctx-${hex8(a)}${hex8(b)}`;
}

function hex8(h: number): string {
  return (h >>> 0).toString(16).padStart(8, "0");
}
