/**
 * The seed of a training pass's dropout masks (LoRA's input dropout): a function of the run's seed,
 * the optimizer step and the micro-batch, so a resumed run draws the masks the uninterrupted run
 * would have. 53 bits (a JavaScript integer; the engine takes it as is).
 */
import { createHash } from "node:crypto";

export function dropoutSeed(seed: number, step: number, micro: number): number {
  const h = createHash("sha256").update(`dropout:${seed}:${step}:${micro}`).digest();
  return h.readUIntBE(0, 6) * 32 + (h[6]! >> 3);
}
