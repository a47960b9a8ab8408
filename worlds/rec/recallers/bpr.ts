/**
 * BPR matrix factorisation (Rendle et al., 2009), trained by seeded SGD: for each training pair
 * (u, i), in a shuffled order every epoch, an item j the user has not interacted with is drawn
 * uniformly, and one step of gradient ascent is taken on
 *
 *   ln sigmoid(x_uij) - reg * (|p_u|^2 + |q_i|^2 + |q_j|^2),   x_uij = <p_u, q_i - q_j>,
 *
 * so with g = 1 - sigmoid(x_uij): p_u += lr (g (q_i - q_j) - reg p_u), q_i += lr (g p_u - reg q_i),
 * q_j += lr (-g p_u - reg q_j). The score of item i for user u is <p_u, q_i>.
 */
import { Rng } from "../../core/rng.js";
import { gaussian } from "../gaussian.js";
import type { TrainSet } from "../split.js";
import type { Recaller } from "./recaller.js";

export interface BprOptions {
  /** Embedding size. */
  readonly dim?: number;
  readonly epochs?: number;
  readonly lr?: number;
  readonly reg?: number;
  readonly seed?: number;
}

export const BPR_DEFAULTS = { dim: 32, epochs: 30, lr: 0.05, reg: 0.001, seed: 0 } as const;

export interface BprModel extends Recaller {
  /** Mean BPR loss (-ln sigmoid(x_uij)) of each epoch, as trained. */
  readonly losses: readonly number[];
}

export function fitBpr(train: TrainSet, opts: BprOptions = {}, onEpoch?: (epoch: number, loss: number) => void): BprModel {
  const { dim, epochs, lr, reg, seed } = { ...BPR_DEFAULTS, ...opts };
  const rng = Rng.seeded(`bpr:${seed}`);
  const P = Float64Array.from({ length: train.users * dim }, () => 0.1 * gaussian(rng)); // [users, dim]
  const Q = Float64Array.from({ length: train.items * dim }, () => 0.1 * gaussian(rng)); // [items, dim]
  const seen = train.rows.map((r) => new Set(r));
  const pairs: number[] = []; // (u, i) flattened
  train.rows.forEach((row, u) => {
    for (const i of seen[u]!) pairs.push(u, i);
  });
  const n = pairs.length / 2;
  const order = Int32Array.from({ length: n }, (_, t) => t);
  const losses: number[] = [];
  for (let epoch = 0; epoch < epochs; epoch++) {
    for (let t = n - 1; t > 0; t--) {
      const s = rng.int(t + 1);
      const tmp = order[t]!;
      order[t] = order[s]!;
      order[s] = tmp;
    }
    let loss = 0;
    for (let t = 0; t < n; t++) {
      const u = pairs[2 * order[t]!]!;
      const i = pairs[2 * order[t]! + 1]!;
      const mine = seen[u]!;
      if (mine.size >= train.items) continue; // no negative to draw
      let j = rng.int(train.items);
      while (mine.has(j)) j = rng.int(train.items);
      const pu = u * dim;
      const qi = i * dim;
      const qj = j * dim;
      let x = 0;
      for (let d = 0; d < dim; d++) x += P[pu + d]! * (Q[qi + d]! - Q[qj + d]!);
      // -ln sigmoid(x), computed without overflow for large |x|.
      loss += x > 0 ? Math.log1p(Math.exp(-x)) : -x + Math.log1p(Math.exp(x));
      const g = 1 / (1 + Math.exp(x)); // 1 - sigmoid(x)
      for (let d = 0; d < dim; d++) {
        const p = P[pu + d]!;
        const a = Q[qi + d]!;
        const b = Q[qj + d]!;
        P[pu + d] = p + lr * (g * (a - b) - reg * p);
        Q[qi + d] = a + lr * (g * p - reg * a);
        Q[qj + d] = b + lr * (-g * p - reg * b);
      }
    }
    losses.push(loss / Math.max(1, n));
    onEpoch?.(epoch + 1, losses[losses.length - 1]!);
  }
  return {
    name: "bpr",
    losses,
    score(user, _history, out) {
      const pu = user * dim;
      for (let i = 0; i < train.items; i++) {
        let s = 0;
        const qi = i * dim;
        for (let d = 0; d < dim; d++) s += P[pu + d]! * Q[qi + d]!;
        out[i] = s;
      }
    },
  };
}
