/**
 * The learning recipe's GRPO stage (docs/learning.md): the `train grpo` command that goes on from
 * the recipe's SFT policy, for `npm run demo:learn`.
 *
 * The stage trains in the mode where SFT leaves something to learn. In simulation mode the policy
 * cites a line of the compact context, and the recipe's SFT leaves almost none of its training
 * questions wrong there, nor ToMi val's false-belief ones: GRPO there has nothing to move. In
 * vanilla mode (the raw story) the policy does the perspective-taking itself and SFT leaves much
 * more wrong, so ToMi's GRPO stage is in vanilla mode, on the training questions SFT still gets
 * wrong there (`--skip-solved`), with settings meant to keep one type from being bought with
 * another (measured, they do not quite: the false-belief types rise and first-order true belief
 * falls; the figures are in docs/learning.md, "GRPO in vanilla mode"):
 * - every question type drawn in equal shares (`--balance type`): in a right-or-wrong reward the
 *   types SFT is weakest on would otherwise fill the batches, and a rule that answers them (the
 *   object's first place, say) is paid for by the others;
 * - a share of the solved questions kept (`--keep-solved`): under dynamic sampling they cost
 *   nothing while every sample stays right, and pull the policy back as soon as some go wrong;
 * - a KL to the SFT policy, and answers among the story's containers (`--constrain options`), as
 *   the evaluations ask them (`policy:DIR?constrain=options`).
 * Hi-ToM's recipe trains no vanilla mode (its stories pass the 1m preset's window), so its GRPO
 * stays in simulation mode with the earlier settings.
 */
import type { Mode } from "../worlds/question/benchmark.js";
import { writtenOrder, type ContextSource } from "../agents/policy/options.js";
import type { RecipeWorld } from "./learn-recipe.js";

/** The settings of each mode's GRPO stage (flags of `train grpo`, without their values' defaults). */
export const RECIPE_GRPO_SETTINGS: Record<Mode, Readonly<Record<string, string>>> = {
  // Nothing left to learn after SFT: a small step on what is still wrong, a quarter of the solved kept.
  simulation: { prompts: "16", "group-size": "8", temperature: "1", lr: "3e-5", kl: "0.01", "keep-solved": "0.25" },
  // The setting that moved the types least against each other of those measured (docs/learning.md, "GRPO in vanilla mode").
  vanilla: { prompts: "48", "group-size": "8", temperature: "1", lr: "5e-5", kl: "0.05", "keep-solved": "0.1", balance: "type" },
};

/** Steps of the stage by default: vanilla mode has far more of its questions left to learn. */
export const RECIPE_GRPO_STEPS: Record<Mode, number> = { simulation: 10, vanilla: 30 };

/**
 * Questions of the training file GRPO reads in vanilla mode (its first N): the greedy pass that
 * finds what SFT gets wrong answers each of them once, so N bounds the stage's start. The file's
 * first questions are not balanced by type (learn-recipe.ts keeps each type's quota in the
 * generator's order, and the rare first-order false belief fills its quota last): `--balance
 * type` still draws the types in equal shares, from a smaller pool of the rare ones.
 */
export const RECIPE_GRPO_QUESTIONS = 12000;

export interface RecipeGrpoOptions {
  readonly world: RecipeWorld;
  /** The SFT policy the stage starts from, and the folder it writes. */
  readonly model: string;
  readonly out: string;
  /** The generated training questions (the recipe's train.txt or train.json). */
  readonly trainFile: string;
  readonly store: string;
  readonly mode: Mode;
  readonly steps: number;
  readonly seed: number;
  /** The first N questions of the file (default: RECIPE_GRPO_QUESTIONS in vanilla mode, all in simulation mode). */
  readonly questions?: number;
  /** `--device`, `--precision` of the caller. */
  readonly device?: readonly string[];
  /**
   * Who writes the simulation-mode context (the recipe's --context): where the policy writes it,
   * simulation mode's GRPO asks that prompt (`train grpo --context`) with the trace's token budget,
   * as SFT taught and the evaluations ask it. Vanilla mode has no context to write.
   */
  readonly context?: ContextSource;
}

/** What a written context's trace and answer line need (the agent's default budget), where an answer alone needs 16. */
const WRITTEN_NEW_TOKENS = "256";

/** The mode the stage trains in: vanilla where the recipe trains vanilla mode too (its SFT's weakest), else simulation. */
export function recipeGrpoMode(world: RecipeWorld, vanillaShare: number): Mode {
  return world === "tomi" && vanillaShare > 0 ? "vanilla" : "simulation";
}

/** The arguments of `socialworld train grpo` for the stage. */
export function recipeGrpoArgs(o: RecipeGrpoOptions): string[] {
  const questions = o.questions ?? (o.mode === "vanilla" ? RECIPE_GRPO_QUESTIONS : undefined);
  const settings = Object.entries(RECIPE_GRPO_SETTINGS[o.mode]).flatMap(([flag, value]) => [`--${flag}`, value]);
  const written = o.mode === "simulation" && o.context !== undefined && writtenOrder(o.context) !== undefined;
  return [
    "train", "grpo", "--model", o.model, "--bench", o.world, "--data", o.trainFile, "--mode", o.mode,
    ...(written ? ["--context", o.context!] : []),
    ...(questions !== undefined ? ["--limit", String(questions)] : []),
    "--out", o.out, "--store", o.store, "--steps", String(o.steps), ...settings,
    "--max-new-tokens", written ? WRITTEN_NEW_TOKENS : "16", "--clip-high", "0.28", "--loss-agg", "token-mean", "--dynamic-sampling", "--max-rollout-batches", "4",
    "--skip-solved", "--constrain", "options", "--seed", String(o.seed), "--save-every", "100000", "--micro-batch", "32",
    // Afresh: an earlier run's checkpoints in OUT (other settings, or fewer steps) would otherwise stay beside this one's.
    "--resume", "off",
    ...(o.device ?? []),
  ];
}

