/**
 * Level credit under joint generation: a reply written in levels (usersim's hierarchy) but sampled
 * in one generation is one sequence of the loss, so per-level credit reaches its levels through
 * its tokens: each token is credited with the level it belongs to. A level's text is a tagged
 * block, `<name>...</name>` (AnswerLevel.name is its tag), and the levels come in order, joined
 * by their separator; the blocks are found in the reply's text, and each token goes to the block
 * its characters overlap most. A token that overlaps none (the separator between two blocks, the
 * end of turn after the last) belongs to no level (-1): the trainer credits it with the reply's
 * advantage. Only a reply its judge found well-formed is split; a malformed one is not (its tags
 * may be anywhere, or missing), and all of its tokens are credited with the reply.
 */

/** Where a level's block lies in a text: [start, end) in UTF-16 units, its tags included. */
export interface BlockSpan {
  readonly start: number;
  readonly end: number;
}

/**
 * The block of each level in `text`, in order: level k's opening tag searched after level k-1's
 * closing tag, its closing tag after its opening one. Undefined when a level's block is missing.
 */
export function levelBlocks(text: string, names: readonly string[]): BlockSpan[] | undefined {
  const out: BlockSpan[] = [];
  let pos = 0;
  for (const name of names) {
    const start = text.indexOf(`<${name}>`, pos);
    if (start < 0) return undefined;
    const close = `</${name}>`;
    const end = text.indexOf(close, start + name.length + 2);
    if (end < 0) return undefined;
    pos = end + close.length;
    out.push({ start, end: pos });
  }
  return out;
}

/**
 * The level of each of a reply's tokens (-1: none), given the reply's text and how its tokens
 * decode: token i covers the characters between the decoded texts of tokens 0..i-1 and 0..i.
 * Prefixes are decoded whole, and a prefix that ends inside a character (a byte-level token that
 * holds only its first bytes decodes them as U+FFFD) is read without that tail, so the character
 * is covered by the token that completes it; a token that covers nothing new (those first bytes)
 * goes with the character it begins. Tokens past the text (the end-of-turn token, which the text
 * leaves out) belong to no level. Undefined when a level's block is missing from the text.
 */
export function tokenLevels(text: string, ids: readonly number[], decode: (ids: readonly number[]) => string, names: readonly string[]): Int16Array | undefined {
  const blocks = levelBlocks(text, names);
  if (!blocks) return undefined;
  const levels = new Int16Array(ids.length).fill(-1);
  let from = 0;
  for (let i = 0; i < ids.length; i++) {
    const decoded = decode(ids.slice(0, i + 1)).replace(/\uFFFD+$/, "").length;
    if (decoded > text.length) break;
    const to = Math.max(from, decoded);
    const [a, b] = to > from ? [from, to] : [from, from + 1];
    let best = 0;
    blocks.forEach((block, k) => {
      const overlap = Math.min(b, block.end) - Math.max(a, block.start);
      if (overlap > best) {
        best = overlap;
        levels[i] = k;
      }
    });
    from = to;
  }
  return levels;
}
