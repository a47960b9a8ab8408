/**
 * The multi-recaller merge: each recaller's scores are standardised over the items that can be
 * recommended (the history masked: z = (s - mean) / std; a recaller that scores them all alike
 * gives 0), then summed with the weights, which are normalised to sum to 1. Standardising makes
 * the weights comparable across recallers whose scores live on different scales (counts,
 * similarity sums, dot products).
 */
import type { Recaller } from "./recaller.js";

export type Weights = Readonly<Record<string, number>>;

export class MixtureError extends Error {}

/** The weights checked against the recallers and normalised to sum to 1. */
export function normaliseWeights(weights: Weights, names: readonly string[]): number[] {
  for (const [name, w] of Object.entries(weights)) {
    if (!names.includes(name)) throw new MixtureError(`no recaller "${name}" (recallers: ${names.join(", ")})`);
    if (!Number.isFinite(w) || w < 0) throw new MixtureError(`the weight of ${name} must be a number >= 0, got ${w}`);
  }
  const ws = names.map((n) => weights[n] ?? 0);
  const total = ws.reduce((a, b) => a + b, 0);
  if (!(total > 0)) throw new MixtureError("the weights are all 0: give at least one recaller a weight above 0");
  return ws.map((w) => w / total);
}

/** Standardises `scores` in place over the items not in `history`. */
export function standardise(scores: Float64Array, history: readonly number[]): void {
  const masked = new Set(history);
  let n = 0;
  let mean = 0;
  for (let i = 0; i < scores.length; i++) if (!masked.has(i)) (n++, (mean += scores[i]!));
  mean /= Math.max(1, n);
  let v = 0;
  for (let i = 0; i < scores.length; i++) if (!masked.has(i)) v += (scores[i]! - mean) ** 2;
  const std = Math.sqrt(v / Math.max(1, n));
  for (let i = 0; i < scores.length; i++) scores[i] = std > 0 ? (scores[i]! - mean) / std : 0;
}

export function mixtureRecaller(recallers: readonly Recaller[], weights: Weights, name = "mixture"): Recaller {
  const ws = normaliseWeights(
    weights,
    recallers.map((r) => r.name),
  );
  let buf: Float64Array | undefined;
  return {
    name,
    score(user, history, out) {
      if (!buf || buf.length !== out.length) buf = new Float64Array(out.length);
      out.fill(0);
      recallers.forEach((r, k) => {
        if (ws[k] === 0) return;
        r.score(user, history, buf!);
        standardise(buf!, history);
        for (let i = 0; i < out.length; i++) out[i]! += ws[k]! * buf![i]!;
      });
    },
  };
}

/** "pop=0.2,bpr=0.8" -> {pop: 0.2, bpr: 0.8}. */
export function parseWeights(spec: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of spec.split(",")) {
    const m = /^\s*([a-z][a-z0-9_-]*)\s*=\s*([0-9.eE+-]+)\s*$/.exec(part);
    if (!m || !Number.isFinite(Number(m[2]))) throw new MixtureError(`expected RECALLER=WEIGHT pairs separated by commas, got "${part}"`);
    if (Object.hasOwn(out, m[1]!)) throw new MixtureError(`${m[1]} is given twice`);
    out[m[1]!] = Number(m[2]);
  }
  return out;
}
