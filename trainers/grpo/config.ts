/**
 * Every knob of the GRPO trainer, with the defaults the field runs (verl's GRPO recipe and DAPO's
 * additions, off unless asked for). One zod schema checks the command line, a room's self-play
 * schedule and a resumed run's saved settings alike.
 */
import { z } from "zod";
import { GENERATION_MODES } from "../../agents/policy/options.js";

export const ADVANTAGE_STD = ["group", "batch", "none"] as const;
/** How a group's rewards become its replies' advantages (advantages.ts: the registry). */
export const ADVANTAGE_ESTIMATORS = ["grpo", "rft"] as const;
/** Which reward a reply's tokens are credited with (advantages.ts: levelAdvantagesOf). */
export const CREDIT_ASSIGNMENTS = ["reply", "level"] as const;
/** How the trainer draws its points (point-order.ts). */
export const POINT_BALANCES = ["none", "type"] as const;
export const LOSS_AGGREGATIONS = ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm"] as const;
export const KL_ESTIMATORS = ["k1", "k2", "k3"] as const;
export const KL_PLACEMENTS = ["loss", "reward"] as const;
export const GRPO_CONSTRAIN_MODES = ["schema", "options", "off"] as const;

export type AdvantageStd = (typeof ADVANTAGE_STD)[number];
export type AdvantageEstimator = (typeof ADVANTAGE_ESTIMATORS)[number];
export type CreditAssignment = (typeof CREDIT_ASSIGNMENTS)[number];
export type PointBalance = (typeof POINT_BALANCES)[number];
export type LossAggregation = (typeof LOSS_AGGREGATIONS)[number];
export type KlEstimator = (typeof KL_ESTIMATORS)[number];

export const RewardWeightsSchema = z
  .object({
    /** Exact answer match (a benchmark's official judge; for a world, the reference action). */
    exact: z.number().min(0).default(1),
    /** Token F1 against the reference (SQuAD's). */
    f1: z.number().min(0).default(0),
    /** ROUGE-L F-measure against the reference. */
    rougeL: z.number().min(0).default(0),
    /** A bonus for a reply in the strict format (a failure always gets `formatFailure`). */
    format: z.number().min(0).default(0),
    /**
     * The share of a written context's trace lines right against the world model's (a policy that
     * writes its own context, `context=self`: DecisionPoint.trace), issue 27's denser signal than
     * the one answer. 0 (the default): the answer's reward alone.
     */
    trace: z.number().min(0).default(0),
  })
  .strict();
export type RewardWeights = z.infer<typeof RewardWeightsSchema>;

export const GrpoConfigSchema = z
  .object({
    /** Optimizer steps (one rollout batch each, times updatesPerBatch updates). */
    steps: z.number().int().min(1).default(100),
    /** Prompts per rollout batch. */
    prompts: z.number().int().min(1).default(8),
    /** G: samples per prompt. */
    groupSize: z.number().int().min(1).default(8),
    /** Several updates per batch: passes over the batch (PPO epochs), old log-probs from the rollout. */
    epochs: z.number().int().min(1).default(1),
    /** Prompts per optimizer update (0: the whole batch, one update per epoch). */
    miniBatch: z.number().int().min(0).default(0),
    /** Sequences per forward/backward pass (memory; does not change the result). */
    microBatch: z.number().int().min(1).default(16),

    /**
     * The advantage estimator: grpo, (R - group mean) / (std + eps); or rft, rejection-sampling
     * fine-tuning (the group's best replies share the group's weight; advantages.ts says why).
     */
    advantage: z.enum(ADVANTAGE_ESTIMATORS).default("grpo"),
    /** grpo's std: of the group, of the batch, or none (Dr. GRPO). */
    advantageStd: z.enum(ADVANTAGE_STD).default("group"),
    advantageEps: z.number().min(0).default(1e-6),
    /**
     * An answer written in levels (usersim's hierarchy): `reply`, every level's tokens get the whole
     * reply's advantage; `level`, HumanLM's per-tag rewards: each level's tokens get the advantage
     * of that level's own score (the judge's, estimated over the group level by level), the
     * response's the response's; under joint generation the reply's tokens are split by its levels'
     * tags (level-tokens.ts).
     */
    credit: z.enum(CREDIT_ASSIGNMENTS).default("reply"),

    /** Clipped importance ratio: [1 - clipLow, 1 + clipHigh] (DAPO's clip-higher raises clipHigh). */
    clipLow: z.number().min(0).max(1).default(0.2),
    clipHigh: z.number().min(0).default(0.2),
    /** Dual clip: for negative advantages the loss is at most -A * dualClip (0: off). */
    dualClip: z.number().min(0).default(3),
    lossAggregation: z.enum(LOSS_AGGREGATIONS).default("token-mean"),

    /** KL to the frozen starting policy (0: no reference model). */
    klCoef: z.number().min(0).default(0.001),
    klEstimator: z.enum(KL_ESTIMATORS).default("k3"),
    /** A loss term (GRPO) or folded into the reward (PPO's way). */
    klIn: z.enum(KL_PLACEMENTS).default("loss"),
    /** Entropy bonus: minus this times the aggregated entropy. */
    entropyCoef: z.number().min(0).default(0),

    /**
     * How points are drawn (point-order.ts): a shuffle of all (none), or every type of question in
     * equal shares (type), so that a rule right on the common types cannot earn most of the reward.
     */
    balance: z.enum(POINT_BALANCES).default("none"),
    /** Leave out the decision points the starting policy already answers right when greedy (difficulty.ts). */
    skipSolved: z.boolean().default(false),
    /** With skipSolved: the share of already solved points kept anyway (seeded), a replay against forgetting. */
    keepSolved: z.number().min(0).max(1).default(0),
    /**
     * With skipSolved: the share kept of each named kind of point (a benchmark question's type, as
     * `balance: type` reads it), in place of keepSolved for that kind. Why: the share kept moves
     * what the policy learns on a kind, and one share for all could not both leave a pair of
     * kinds that trade against each other where they were and replay what the policy had right
     * on the others (docs/learning.md, "GRPO in vanilla mode").
     */
    keepSolvedByKind: z.record(z.string().min(1), z.number().min(0).max(1)).default({}),
    /** DAPO's dynamic sampling: drop groups whose rewards are all equal, sample more to fill the batch. */
    dynamicSampling: z.boolean().default(false),
    /** Rollout batches tried per step to fill it under dynamic sampling. */
    maxRolloutBatches: z.number().int().min(1).default(4),
    /** DAPO's soft overlong penalty: over maxNewTokens - overlongBuffer tokens, up to -overlongPenalty (0: off). */
    overlongBuffer: z.number().int().min(0).default(0),
    overlongPenalty: z.number().min(0).default(1),
    /** Leave replies cut at maxNewTokens out of the loss (DAPO's overlong filtering). */
    maskTruncated: z.boolean().default(false),

    rewards: RewardWeightsSchema.default({ exact: 1, f1: 0, rougeL: 0, format: 0, trace: 0 }),
    /** The reward of a reply that fails the strict format: the lowest there is. */
    formatFailure: z.number().default(-1),
    /**
     * Subtracted from a reply's reward for each fact it states that its agent never perceived
     * (the information-leak audit, worlds/core/leak-audit.ts; world decision points). 0: off.
     */
    leakPenalty: z.number().min(0).default(0),

    temperature: z.number().positive().default(1),
    /**
     * Sample each reply under its action's grammar (`schema`: the action schema's JSON, or a bare
     * answer, as the policy agent writes it; agents/policy/action-grammar.ts), so that replies
     * parse; the loss then works on the masked distributions the replies were drawn from. `off`:
     * the whole vocabulary.
     */
    constrain: z.enum(GRPO_CONSTRAIN_MODES).default("schema"),
    /**
     * How a point whose answer has levels (usersim's hierarchy) is sampled: `joint`, the whole
     * reply in one generation of maxNewTokens; `per-level`, HumanLM's: one generation per level,
     * each with its own prompt, grammar and budget (the hierarchy's max_tokens;
     * agents/policy/level-decoding.ts), the loss over each level's tokens under its own masks.
     */
    generation: z.enum(GENERATION_MODES).default("joint"),
    topK: z.number().int().min(0).default(0),
    /** Top-p of the replies' sampling, and under `soft` the support of every soft token. */
    topP: z.number().positive().max(1).default(1),
    maxNewTokens: z.number().int().min(1).default(64),
    /**
     * SofT-GRPO (docs/soft-grpo.md): each reply first thinks in `thinkingSteps` soft tokens (the
     * top-p support Gumbel-noised, y = softmax(q' / tau), the next input the y-mixture of
     * embeddings), then answers in tokens; the soft tokens' ratio is that of their Gumbel noise
     * densities (loss.ts), clipped with the answer tokens'.
     */
    soft: z.boolean().default(false),
    thinkingSteps: z.number().int().min(1).max(4096).default(8),
    tau: z.number().positive().default(1),

    lr: z.number().positive().default(1e-6),
    minLr: z.number().min(0).optional(),
    warmupSteps: z.number().int().min(0).default(0),
    /**
     * The schedule's length in optimizer updates (default: the run's steps times its updates a
     * batch). A run continued by others (self-play's `continueTraining`) keeps its place on one
     * schedule across them: give it the updates of all of them, or the decay ends with the first.
     */
    scheduleSteps: z.number().int().min(1).optional(),
    weightDecay: z.number().min(0).default(0.01),
    beta1: z.number().min(0).lt(1).default(0.9),
    beta2: z.number().min(0).lt(1).default(0.999),
    eps: z.number().positive().default(1e-8),
    /** Clip the global gradient norm (0: off). */
    gradClip: z.number().min(0).default(1),
    seed: z.number().int().min(0).max(2 ** 32 - 1).default(0),
  })
  .strict()
  .refine((c) => c.miniBatch === 0 || c.prompts % c.miniBatch === 0, { message: "prompts must be a multiple of miniBatch", path: ["miniBatch"] })
  .refine((c) => c.overlongBuffer < c.maxNewTokens, { message: "overlongBuffer must be smaller than maxNewTokens", path: ["overlongBuffer"] })
  .refine((c) => !(c.soft && c.generation === "per-level"), { message: "per-level generation goes without soft thinking", path: ["generation"] })
  .refine((c) => c.credit === "reply" || !c.soft, { message: "level credit goes without soft thinking (its thinking tokens belong to no level)", path: ["credit"] });

export type GrpoConfig = z.infer<typeof GrpoConfigSchema>;
export type GrpoConfigInput = z.input<typeof GrpoConfigSchema>;

/** Optimizer updates per rollout batch. */
export function updatesPerBatch(c: GrpoConfig): number {
  return c.epochs * (c.miniBatch === 0 ? 1 : c.prompts / c.miniBatch);
}
