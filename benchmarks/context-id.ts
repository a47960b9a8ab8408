/** A stable id for a story's socialized context: 64 bits of hash of its text. */
export function contextIdOf(story: string): string {
  // Two FNV-1a hashes: of the story, and of `${story.length}:${story}` (hashString of each, as ids
  // have always been made), in one pass over the story: the second hash continues from its
  // prefix's. A run hashes every distinct story it logs.
  const FNV_PRIME = 0x01000193;
  let a = 0x811c9dc5;
  let b = 0x811c9dc5;
  const prefix = `${story.length}:`;
  for (let i = 0; i < prefix.length; i++) b = Math.imul(b ^ prefix.charCodeAt(i), FNV_PRIME);
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
