/**
 * Token sampling in TypeScript, for runtimes that hand back logits (the ONNX runner). Same rules
 * as the engine's sampler (native/src/sampler.cpp): temperature, then top-k, then top-p on what
 * top-k left; the returned log-prob is log softmax(logits / temperature)[token] over the whole
 * vocabulary (temperature 1 when greedy).
 */
import type { Rng } from "../worlds/core/rng.js";

export interface SampleSettings {
  readonly temperature: number;
  readonly topK: number;
  readonly topP: number;
}

export function sampleToken(logits: ArrayLike<number>, s: SampleSettings, rng: Rng): { token: number; logprob: number } {
  const V = logits.length;
  const greedy = s.temperature <= 0;
  const temp = greedy ? 1 : s.temperature;
  let m = -Infinity;
  let best = 0;
  for (let i = 0; i < V; i++) {
    const z = logits[i]! / temp;
    if (z > m) {
      m = z;
      best = i;
    }
  }
  let sum = 0;
  for (let i = 0; i < V; i++) sum += Math.exp(logits[i]! / temp - m);
  const lse = m + Math.log(sum);
  if (greedy) return { token: best, logprob: logits[best]! - lse };

  let cand = Array.from({ length: V }, (_, i) => i);
  const byLogit = (a: number, b: number) => logits[b]! - logits[a]! || a - b;
  const limitK = s.topK > 0 && s.topK < V;
  if (limitK || s.topP < 1) {
    cand.sort(byLogit);
    if (limitK) cand = cand.slice(0, s.topK);
  }
  const top = logits[cand[0]!]! / temp;
  let weights = cand.map((i) => Math.exp(logits[i]! / temp - top));
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
  let token = cand[cand.length - 1]!;
  for (let i = 0; i < cand.length; i++) {
    acc += weights[i]!;
    if (u < acc) {
      token = cand[i]!;
      break;
    }
  }
  return { token, logprob: logits[token]! / temp - lse };
}
