/** A stable id for a story's socialized context: 64 bits of hash of its text. */
export function contextIdOf(story: string): string {
  // Two 32-bit FNV-1a hashes: of the text, and of `${length}:${text}`. Both are taken in one pass
  // over the text (the second starts from its prefix's hash): a run hashes every story it replays,
  // and in V8's baseline code each character costs a few calls, so one pass instead of two counts.
  const prefix = `${story.length}:`;
  let b = FNV_OFFSET;
  for (let i = 0; i < prefix.length; i++) b = Math.imul(b ^ prefix.charCodeAt(i), FNV_PRIME);
  let a = FNV_OFFSET;
  for (let i = 0; i < story.length; i++) {
    const c = story.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME);
    b = Math.imul(b ^ c, FNV_PRIME);
  }
  return `ctx-${hex8(a)}${hex8(b)}`;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

function hex8(h: number): string {
  return (h >>> 0).toString(16).padStart(8, "0");
}
