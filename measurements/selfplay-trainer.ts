/**
 * The self-play room's `selfPlay` schedule as the self-play script (selfplay-quiz.ts) asks for it:
 * a round every `episodes` episodes on the quiz questions alone, and the round's GRPO settings.
 *
 * The learning-rate schedule is the part that needs care. Without `continue`, every round is a
 * GRPO run of its own, so `warmup` and the decay to `minLr` happen again in each round. With
 * `continue` the rounds are one run (the room's `continueTraining`): the warmup happens once, over
 * the pool's first updates, and the decay spans every round's updates (`scheduleSteps`), so that
 * later rounds make smaller steps; a decay over one round's updates would leave rounds 2 on at
 * `minLr` (the room refuses it).
 */
import type { AdvantageEstimator, PointBalance } from "../trainers/grpo/config.js";

export interface SelfPlayScriptSettings {
  /** The rounds the script measures: with `continue` and `minLr`, the decay spans all of them. */
  readonly rounds: number;
  readonly episodes: number;
  /** A round learns from the quiz questions of at most this many of the latest episodes. */
  readonly recentEpisodes: number;
  readonly heldOutEpisodes: number;
  readonly continue: boolean;
  readonly steps: number;
  readonly prompts: number;
  readonly temperature: number;
  readonly advantage: AdvantageEstimator;
  readonly balance: PointBalance;
  readonly lr: number;
  readonly minLr?: number;
  readonly warmup: number;
  readonly kl: number;
  readonly seed: number;
}

/** The room's `selfPlay` option (server/self-play/options.ts) for the script's pool. */
export function selfPlaySchedule(pool: string, s: SelfPlayScriptSettings) {
  return {
    pool,
    everyEpisodes: s.episodes,
    recentEpisodes: s.recentEpisodes,
    // ToMi pays no reward of its own: under the action grammar every turn is valid, so the turns
    // would teach nothing. The story's script plays no part, and nothing rewards acting like it.
    turns: false,
    // The board's own held-out curve: the room's first episodes, never trained on, every round scored on them.
    ...(s.heldOutEpisodes > 0 ? { heldOutEpisodes: s.heldOutEpisodes } : {}),
    ...(s.continue ? { continueTraining: true } : {}),
    // Dynamic sampling: a group whose replies all got the same reward (all right, or all wrong)
    // has no advantage; the round samples more questions until each step's groups can teach.
    trainer: {
      steps: s.steps, prompts: s.prompts, groupSize: 8, maxNewTokens: 8, temperature: s.temperature, advantage: s.advantage, balance: s.balance,
      lr: s.lr, klCoef: s.kl, clipHigh: 0.28, constrain: "options",
      lossAggregation: "token-mean", dynamicSampling: true, maxRolloutBatches: 3, seed: s.seed,
      ...(s.warmup > 0 ? { warmupSteps: s.warmup } : {}),
      ...(s.minLr !== undefined ? { minLr: s.minLr } : {}),
      // One update a step (no epochs, no mini-batches): the rounds' updates are their steps.
      ...(s.minLr !== undefined && s.continue ? { scheduleSteps: s.rounds * s.steps } : {}),
    },
  };
}
