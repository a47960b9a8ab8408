import { hashString } from "../worlds/core/rng.js";

/** A stable id for a story's socialized context: 64 bits of hash of its text. */
export function contextIdOf(story: string): string {
  const a = hashString(story).toString(16).padStart(8, "0");
  const b = hashString(`${story.length}:${story}`).toString(16).padStart(8, "0");
  return `ctx-${a}${b}`;
}
