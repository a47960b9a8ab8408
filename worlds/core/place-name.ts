/**
 * A container or room named in an answer, as the ToMi and Hi-ToM benchmarks compare such names:
 * case, a leading "the", surrounding quotes and end punctuation aside, spaces read as
 * underscores ("The green crate." and "green_crate" are one name).
 */
export function placeKey(s: string): string {
  // Answers name a few hundred places, compared thousands of times in a run.
  let key = keys.get(s);
  if (key === undefined) {
    key = keyOf(s);
    if (keys.size > 10_000) keys.clear();
    keys.set(s, key);
  }
  return key;
}

const keys = new Map<string, string>();

function keyOf(s: string): string {
  return s
    .trim()
    .toLowerCase()
    .replace(/^the\s+/, "")
    .replace(/[.!?"'`]+$/g, "")
    .replace(/^["'`]+/, "")
    .replace(/\s+/g, "_");
}
