/**
 * Merging a LoRA adapter into its base (PEFT's merge_and_unload): W[out, in] += scale * B[out, r]
 * A[r, in] for every target of every layer, after which the model alone computes what the base
 * with the adapter computed (dropout aside, which only training passes apply).
 */
import type { PolicyAdapter } from "./adapter.js";
import type { PolicyModel } from "./model.js";
import { loadNative, type TensorInfo } from "./native.js";

/** The base weight an adapter tensor belongs to: ...q_proj.lora_A.weight -> model.layers.N.self_attn.q_proj.weight. */
export function baseWeightName(adapterTensor: string): string {
  return adapterTensor.replace(/^base_model\.model\./, "").replace(/\.lora_[AB]\.weight$/, ".weight");
}

/** Adds the adapter's products into the model's weights (the adapter itself is unchanged). */
export function mergeAdapter(model: PolicyModel, adapter: PolicyAdapter): void {
  if (adapter.model !== model.native) throw new Error("the LoRA adapter was made for another model");
  const { gemm } = loadNative();
  const weights = new Map(model.tensors().map((t) => [t.name, t]));
  const lora = new Map(adapter.native.tensors().map((t) => [t.name, t]));
  const a = adapter.weights.readParams();
  const slice = (t: TensorInfo, buf: typeof a) => buf.subarray(t.offset, t.offset + t.size);
  model.updateParams((p) => {
    for (const A of lora.values()) {
      if (!A.name.endsWith(".lora_A.weight")) continue;
      const B = lora.get(A.name.replace(".lora_A.", ".lora_B."))!;
      const W = weights.get(baseWeightName(A.name));
      if (!W) throw new Error(`the model has no ${baseWeightName(A.name)} for ${A.name}`);
      const [r, inF] = A.shape as [number, number];
      const out = B.shape[0]!;
      // W [out, in] += scale * B [out, r] A [r, in]
      gemm(false, false, out, inF, r, adapter.scale, slice(B, a), r, slice(A, a), inF, 1, slice(W, p), inF);
    }
  });
}

/** max |a - b| / max |b|: a difference relative to the logits' scale. */
export function relativeDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
    scale = Math.max(scale, Math.abs(b[i]!));
  }
  return diff / Math.max(scale, Number.MIN_VALUE);
}
