import { hashString } from "../core/rng.js";

/** A stable id for a story's socialized context: 64 bits of hash of its text (two 32-bit FNV-1a hashes). */
export function contextIdOf(story: string): string {
  return `ctx-${hex8(hashString(story))}${hex8(hashString(`${story.length}:${story}`))}`;
}

function hex8(h: number): string {
  return (h >>> 0).toString(16).padStart(8, "0");
}
