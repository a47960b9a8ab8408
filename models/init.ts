/**
 * Seeded random initialisation, as Hugging Face initialises a fresh Qwen2: linear and embedding
 * weights ~ N(0, initializer_range), biases 0, norm weights 1. The draws come from the project's
 * Rng, so the same seed gives the same model on any machine.
 */
import { Rng } from "../worlds/core/rng.js";
import type { PolicyModel } from "./model.js";
import type { FloatArray } from "./native.js";

export function initParams(model: PolicyModel, seed: number | string, std = 0.02): void {
  const rng = Rng.seeded(`policy-init:${seed}`);
  model.updateParams((p) => fill(model, p, rng, std), { overwrite: true });
}

function fill(model: PolicyModel, p: FloatArray, rng: Rng, std: number): void {
  for (const t of model.tensors()) {
    const end = t.offset + t.size;
    if (t.name.endsWith("norm.weight")) p.fill(1, t.offset, end);
    else if (t.name.endsWith(".bias")) p.fill(0, t.offset, end);
    else {
      // Box-Muller, two normals per pair of uniforms.
      for (let i = t.offset; i < end; i += 2) {
        const u1 = 1 - rng.next();
        const u2 = rng.next();
        const r = Math.sqrt(-2 * Math.log(u1)) * std;
        p[i] = r * Math.cos(2 * Math.PI * u2);
        if (i + 1 < end) p[i + 1] = r * Math.sin(2 * Math.PI * u2);
      }
    }
  }
}
