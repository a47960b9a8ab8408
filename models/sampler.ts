/**
 * Token sampling in TypeScript, for runtimes that hand back logits (the ONNX runner). Same rules
 * as the engine's sampler (native/src/sampler.cpp): temperature, then top-k, then top-p on what
 * top-k left; the returned log-prob is log softmax(logits / temperature)[token] over the whole
 * vocabulary (temperature 1 when greedy).
 *
 * Constrained (a grammar's allowed tokens given): the distribution is the masked one, softmax
 * over the allowed tokens only, and temperature, top-k and top-p apply to it; the log-prob is
 * under that masked distribution (0 when a single token is allowed), the convention the policy
 * gradient needs to stay on the distribution the rollout sampled from.
 */
import type { Rng } from "../worlds/core/rng.js";

export interface SampleSettings {
  readonly temperature: number;
  readonly topK: number;
  readonly topP: number;
}

export function sampleToken(logits: ArrayLike<number>, s: SampleSettings, rng: Rng): { token: number; logprob: number } {
  const all = Array.from({ length: logits.length }, (_, i) => i);
  const { index, logprob } = sampleAmong(logits, all, s, rng);
  return { token: index, logprob };
}

/**
 * Samples one of `candidates` (token ids, in increasing order) from the logits restricted to
 * them; returns its position in `candidates` and its log-prob under the restricted distribution.
 */
export function sampleAmong(logits: ArrayLike<number>, candidates: readonly number[], s: SampleSettings, rng: Rng): { index: number; logprob: number } {
  const n = candidates.length;
  if (n === 0) throw new Error("no token to sample from");
  const greedy = s.temperature <= 0;
  const temp = greedy ? 1 : s.temperature;
  let m = -Infinity;
  let best = 0;
  for (let i = 0; i < n; i++) {
    const z = logits[candidates[i]!]! / temp;
    if (z > m) {
      m = z;
      best = i;
    }
  }
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.exp(logits[candidates[i]!]! / temp - m);
  const lse = m + Math.log(sum);
  const logprobOf = (i: number) => (n === 1 ? 0 : logits[candidates[i]!]! / temp - lse);
  // A forced token draws no random number, as in the native engine.
  if (greedy || n === 1) return { index: best, logprob: logprobOf(best) };

  let cand = Array.from({ length: n }, (_, i) => i);
  const byLogit = (a: number, b: number) => logits[candidates[b]!]! - logits[candidates[a]!]! || a - b;
  const limitK = s.topK > 0 && s.topK < n;
  if (limitK || s.topP < 1) {
    cand.sort(byLogit);
    if (limitK) cand = cand.slice(0, s.topK);
  }
  const top = logits[candidates[cand[0]!]!]! / temp;
  let weights = cand.map((i) => Math.exp(logits[candidates[i]!]! / temp - top));
  let total = weights.reduce((a, b) => a + b, 0);
  if (s.topP < 1) {
    let cum = 0;
    let keep = 0;
    while (keep < cand.length) {
      cum += weights[keep]! / total;
      keep++;
      if (cum >= s.topP) break;
    }
    cand = cand.slice(0, keep);
    weights = weights.slice(0, keep);
    total = weights.reduce((a, b) => a + b, 0);
  }
  const u = rng.next() * total;
  let acc = 0;
  let index = cand[cand.length - 1]!;
  for (let i = 0; i < cand.length; i++) {
    acc += weights[i]!;
    if (u < acc) {
      index = cand[i]!;
      break;
    }
  }
  return { index, logprob: logprobOf(index) };
}
