/**
 * Named GRPO settings (`train grpo --preset NAME`): a published recipe's numbers in one place, so
 * a run that follows it says so by name. Flags given beside a preset win over its values.
 */
import type { GrpoConfigInput } from "./config.js";

export interface GrpoPreset {
  readonly describe: string;
  readonly config: GrpoConfigInput;
  /** The recipe's LoRA adapter, as --lora's text (a --lora given beside the preset wins). */
  readonly lora?: string;
  /** The recipe's --resume (a --resume given beside the preset wins). */
  readonly resume?: "auto";
  /** What of the recipe this trainer does not do (printed when the preset is used). */
  readonly unsupported?: string;
}

export const GRPO_PRESETS = {
  // The economic decision agent's recipe (issue 29): rollout n = 2, temperature 0.7, entropy
  // 0.02, KL 0.005, batch 4, with a LoRA adapter of rank 8, alpha 16 on all linear layers, and
  // resume auto (a run started again on the same OUT goes on from its latest checkpoint). The
  // advantages stay scaled by each group's std, as the seed's trainer does: long runs should add
  // `--advantage-std batch`, since with two samples a group's std makes every untied pair +-0.707
  // whatever its gap, and 200 steps drifted until greedy decoding wrote one consumption everywhere
  // (docs/worlds/economy.md, "Consumption's collapse"); at the seed's short budget the batch's
  // std scales the steps down and learns less.
  econagent: {
    describe:
      "the economic decision agent's recipe: group size 2, temperature 0.7, entropy 0.02, KL 0.005, 4 prompts a step, LoRA r=8 alpha=16 on all linear layers, resume auto",
    config: { groupSize: 2, temperature: 0.7, entropyCoef: 0.02, klCoef: 0.005, prompts: 4 },
    lora: "r=8,alpha=16,targets=all-linear",
    resume: "auto",
  },
} as const satisfies Readonly<Record<string, GrpoPreset>>;

export type GrpoPresetName = keyof typeof GRPO_PRESETS;
export const GRPO_PRESET_NAMES = Object.keys(GRPO_PRESETS) as GrpoPresetName[];
