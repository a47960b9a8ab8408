/**
 * A LoRA adapter of a policy model (y = x W^T + scale * dropout(x) A^T B^T on the targeted linear
 * layers of every layer), made from LoRA settings: its tensors live beside the model's on its
 * device (NativeAdapter), named as PEFT saves them. peft-adapter.ts reads and writes it in PEFT's
 * layout; PolicyModel.useAdapter runs the model with it.
 */
import { Rng } from "../worlds/core/rng.js";
import { loraScale, type LoraSettings } from "./lora-settings.js";
import { loadNative, type NativeAdapter, type NativeModel } from "./native.js";
import { ParamSet } from "./param-set.js";

export class PolicyAdapter {
  readonly native: NativeAdapter;
  /** The adapter's tensors (A and B of every target), their gradients and AdamW moments. */
  readonly weights: ParamSet;

  /**
   * Zero tensors: call initialise() for a new adapter, or load saved ones. `base` is the base
   * model's folder as the adapter's config will name it (PEFT's base_model_name_or_path).
   */
  constructor(
    readonly model: NativeModel,
    readonly settings: LoraSettings,
    readonly base: string | null = null,
  ) {
    const { LoraAdapter } = loadNative();
    this.native = new LoraAdapter(model, { rank: settings.r, scale: loraScale(settings), dropout: settings.dropout, targets: settings.targets });
    this.weights = new ParamSet(this.native, model.device, model.dtype);
  }

  get scale(): number {
    return this.native.scale;
  }

  get numParams(): number {
    return this.native.numParams;
  }

  /**
   * PEFT's initialisation, seeded: A ~ kaiming_uniform(a = sqrt(5)), which is U(-1/sqrt(in),
   * 1/sqrt(in)) for A's [r, in]; B = 0, so the new adapter leaves the model's outputs unchanged.
   */
  initialise(seed: number | string): this {
    const rng = Rng.seeded(`lora-init:${seed}`);
    this.weights.updateParams(
      (p) => {
        for (const t of this.native.tensors()) {
          if (!t.name.endsWith(".lora_A.weight")) {
            p.fill(0, t.offset, t.offset + t.size);
            continue;
          }
          const bound = 1 / Math.sqrt(t.shape[1]!);
          for (let i = t.offset; i < t.offset + t.size; i++) p[i] = (2 * rng.next() - 1) * bound;
        }
      },
      { overwrite: true },
    );
    return this;
  }
}
