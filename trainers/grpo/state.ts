/**
 * GRPO checkpoints: OUT/checkpoint-STEP/ holds the policy as a Hugging Face folder, the AdamW
 * moments (optimizer.safetensors) and trainer_state.json: the step, the data position (how many
 * decision points the run has taken; under dynamic sampling that is not a multiple of the step),
 * the optimizer's update count, the store run its rollouts are logged to, and the settings a
 * resumed run must share. Sampling seeds derive from the seed, the step and the point, so nothing
 * else is needed to continue exactly. The frozen reference policy is kept once in OUT/reference/.
 * Folders are written under a temporary name and renamed when complete.
 */
import { join } from "node:path";
import { z } from "zod";
import { readTrainerStateFile } from "../common/checkpoint-folders.js";

export const GRPO_STATE_FORMAT = "socialworld-grpo/1";

export const GrpoStateSchema = z.object({
  format: z.literal(GRPO_STATE_FORMAT),
  step: z.number().int().nonnegative(),
  /** Decision points taken so far (the position in the seeded order). */
  cursor: z.number().int().nonnegative(),
  /** Optimizer updates so far (AdamW's bias correction and the schedule count them). */
  updates: z.number().int().nonnegative(),
  runId: z.string().nullable(),
  settings: z.record(z.string(), z.unknown()),
});
export type GrpoState = z.infer<typeof GrpoStateSchema>;

export function readGrpoState(dir: string): GrpoState {
  return readTrainerStateFile(dir, GrpoStateSchema);
}

export function referenceDir(out: string): string {
  return join(out, "reference");
}
