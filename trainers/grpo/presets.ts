/**
 * Named GRPO settings (`train grpo --preset NAME`): a published recipe's numbers in one place, so
 * a run that follows it says so by name. Flags given beside a preset win over its values.
 */
import type { GrpoConfigInput } from "./config.js";

export interface GrpoPreset {
  readonly describe: string;
  readonly config: GrpoConfigInput;
  /** What of the recipe this trainer does not do (printed when the preset is used). */
  readonly unsupported?: string;
}

export const GRPO_PRESETS = {
  // The economic decision agent's recipe (issue 29): rollout n = 2, temperature 0.7, entropy
  // 0.02, KL 0.005, batch 4. Its LoRA (rank 8, alpha 16, all linear layers) is not here: this
  // trainer updates every weight.
  econagent: {
    describe: "the economic decision agent's recipe: group size 2, temperature 0.7, entropy 0.02, KL 0.005, 4 prompts a step",
    config: { groupSize: 2, temperature: 0.7, entropyCoef: 0.02, klCoef: 0.005, prompts: 4 },
    unsupported: "its LoRA (rank 8, alpha 16, all linear layers): this trainer updates every weight",
  },
} as const satisfies Readonly<Record<string, GrpoPreset>>;

export type GrpoPresetName = keyof typeof GRPO_PRESETS;
export const GRPO_PRESET_NAMES = Object.keys(GRPO_PRESETS) as GrpoPresetName[];
