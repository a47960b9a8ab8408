/**
 * A simulation room's self-play schedule (the `selfPlay` room option): every N episodes or T
 * minutes, train the policy its `policy:DIR` seats play on their recent episodes (GRPO, rewarded
 * by the episodes' quiz questions and the world: server/self-play/pool.ts), then play the new
 * checkpoint from the next episode on. Rooms naming the same `pool` train one policy
 * together on all their episodes.
 */
import { z } from "zod";
import { parseLoraOption } from "../../models/lora-settings.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";

/** A round's trainer settings when the room does not say: a short, gentle update. */
export const SELF_PLAY_TRAINER_DEFAULTS = { steps: 8, prompts: 8, groupSize: 4, maxNewTokens: 48, lr: 1e-5 } as const;

export const SelfPlayOptionsSchema = z
  .object({
    /** Rooms with the same pool share the policy and its training (default: the room alone). */
    pool: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "letters, digits, . _ - only (at most 64)").optional(),
    /** Train after this many new episodes (across the pool). */
    everyEpisodes: z.number().int().min(1).max(1_000_000).optional(),
    /** Train every this many minutes (when there are new episodes). */
    everyMinutes: z.number().positive().max(10_080).optional(),
    /** Train on at most this many of the most recent episodes. */
    recentEpisodes: z.number().int().min(1).max(10_000).default(50),
    /**
     * Hold out the pool's first N quizzed episodes: never trained on, their quiz questions are the
     * fixed set every round's policy (and the starting one) is scored on (the board's
     * `heldOutAccuracy`). No round trains before the N are played. Needs the room's `quiz`.
     */
    heldOutEpisodes: z.number().int().min(1).max(1000).optional(),
    /**
     * Learn from the policy seats' turns too, rewarded by validity and the world's own rewards
     * (false: from the quiz questions alone). Under constrained decoding every action is valid, so
     * in a world without rewards of its own (ToMi) the turns teach nothing and only cost rollouts.
     */
    turns: z.boolean().default(true),
    /** The GRPO settings of a round (trainers/grpo/config.ts; camelCase names as there). */
    trainer: z.record(z.string(), z.unknown()).default({}),
    /**
     * Rounds train a LoRA adapter of the seats' policy (`--lora`'s text, e.g. "r=8,alpha=16"):
     * each round continues the previous round's adapter, the base stays frozen (and is the KL's
     * reference), and the rooms play every round over one copy of the base's weights.
     */
    lora: z.string().min(1).optional(),
    /**
     * Each round goes on from the previous round's trainer state (its checkpoint's AdamW moments,
     * update count, schedule position, step and data position) instead of a new optimizer and
     * schedule from its weights: the rounds are one GRPO run whose data is the latest episodes.
     * The KL's reference stays the pool's starting policy, as in that one run.
     */
    continueTraining: z.boolean().default(false),
  })
  .strict()
  .refine((o) => o.everyEpisodes !== undefined || o.everyMinutes !== undefined, { message: "give everyEpisodes or everyMinutes (or both)", path: ["everyEpisodes"] })
  .superRefine((o, ctx) => {
    const r = GrpoConfigSchema.safeParse({ ...SELF_PLAY_TRAINER_DEFAULTS, ...o.trainer });
    if (!r.success) for (const issue of r.error.issues) ctx.addIssue({ code: "custom", message: issue.message, path: ["trainer", ...issue.path.map(String)] });
    // A decay over one round's updates would end with round 1, and every later round train at minLr.
    else if (o.continueTraining && r.data.minLr !== undefined && r.data.minLr !== r.data.lr && r.data.scheduleSteps === undefined)
      ctx.addIssue({ code: "custom", message: "with continueTraining, a decaying learning rate (minLr) needs scheduleSteps: the updates of all the rounds it decays over", path: ["trainer", "scheduleSteps"] });
    if (o.lora !== undefined) {
      try {
        parseLoraOption(o.lora);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message, path: ["lora"] });
      }
    }
  });
export type SelfPlayOptions = z.infer<typeof SelfPlayOptionsSchema>;

export function roundConfig(o: SelfPlayOptions) {
  return GrpoConfigSchema.parse({ ...SELF_PLAY_TRAINER_DEFAULTS, ...o.trainer });
}
