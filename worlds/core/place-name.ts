/**
 * A container or room named in an answer, as the ToMi and Hi-ToM benchmarks compare such names:
 * case, a leading "the", surrounding quotes and end punctuation aside, spaces read as
 * underscores ("The green crate." and "green_crate" are one name).
 */
export function placeKey(s: string): string {
  return s
    .trim()
    .toLowerCase()
    .replace(/^the\s+/, "")
    .replace(/[.!?"'`]+$/g, "")
    .replace(/^["'`]+/, "")
    .replace(/\s+/g, "_");
}
