/**
 * The SFT trainer's state, saved as trainer_state.json in each checkpoint folder (see
 * ../common/checkpoint-folders.ts for the folder layout): the step and the settings.
 */
import { z } from "zod";
import { readTrainerStateFile } from "../common/checkpoint-folders.js";

export const TRAINER_STATE_FORMAT = "socialworld-sft/1";

export const TrainerStateSchema = z.object({
  format: z.literal(TRAINER_STATE_FORMAT),
  /** Optimizer steps done. */
  step: z.number().int().nonnegative(),
  /** The settings that must match for a resumed run to continue exactly. */
  settings: z.record(z.string(), z.unknown()),
  loss: z.number().nullable(),
});
export type TrainerState = z.infer<typeof TrainerStateSchema>;

export function readTrainerState(dir: string): TrainerState {
  return readTrainerStateFile(dir, TrainerStateSchema);
}
