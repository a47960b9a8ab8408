/**
 * The tokens a grammar allowed at each token of a reply sampled under it: the mask the sampler
 * applied, recomputed by walking the reply through the grammar's token automaton exactly as the
 * native sampler walked it (the same budget, the same stop tokens), so that the trainer's
 * log-probs, ratio and entropy are those of the masked distribution the rollout sampled from.
 *
 * The lists are interned in a MaskPool: replies of one group walk the same states, and the states
 * of a counted string share rows, so most positions share a handful of lists (free text under a
 * large vocabulary would otherwise hold nearly the whole vocabulary at every token).
 */
import type { TokenAutomaton } from "../../models/grammar/index.js";

/** Interned allowed-token lists (increasing ids), equal lists the same array. */
export class MaskPool {
  private readonly lists = new Map<string, Int32Array[]>();

  intern(list: Int32Array): Int32Array {
    let h = 0x811c9dc5;
    for (let i = 0; i < list.length; i++) h = Math.imul(h ^ list[i]!, 0x01000193);
    const key = `${list.length}:${h >>> 0}`;
    const same = this.lists.get(key);
    if (!same) {
      this.lists.set(key, [list]);
      return list;
    }
    for (const other of same) if (other.every((t, i) => t === list[i])) return other;
    same.push(list);
    return list;
  }
}

/**
 * Per reply token, the increasing ids the grammar allowed there, with `budget` tokens for the
 * whole reply (the sampler's maxNewTokens) and `stops` the tokens that end it (the completer's
 * stop tokens). Throws when a token was not allowed: the reply was not sampled under this grammar.
 */
export function allowedTokens(automaton: TokenAutomaton, reply: readonly number[], budget: number, stops: ReadonlySet<number>, pool: MaskPool): Int32Array[] {
  const room = automaton.vocabSize + stops.size;
  const tokens = new Int32Array(room);
  const next = new Int32Array(room);
  const out: Int32Array[] = [];
  let state = automaton.start;
  reply.forEach((token, j) => {
    if (state < 0) throw new Error(`reply token ${j} (${token}) comes after the grammar's end`);
    const n = automaton.allowed(state, budget - j, tokens, next, stops);
    const at = tokens.subarray(0, n).indexOf(token);
    if (at < 0) throw new Error(`reply token ${j} (${token}) is not one the grammar allows there: the reply was not sampled under it`);
    state = next[at]!;
    out.push(pool.intern(Int32Array.from(tokens.subarray(0, n)).sort()));
  });
  return out;
}
