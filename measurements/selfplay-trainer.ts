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
      // One update a step (no epochs, no mini-batches): the rounds' updates are their steps. A step
      // whose rollouts all drop (no group with differing rewards, dynamic sampling) makes none, so
      // the decay can end a little above minLr.
      ...(s.minLr !== undefined && s.continue ? { scheduleSteps: s.rounds * s.steps } : {}),
    },
  };
}

/** The schedule options, as `scheduleProblem` checks them. */
export interface ScheduleOptions {
  readonly rounds: number;
  readonly steps: number;
  readonly continue: boolean;
  readonly lr: number;
  readonly minLr: number | undefined;
  readonly warmup: number;
}

/**
 * What the script refuses before any work (undefined: nothing), naming its option: a "decay"
 * that ends above the rate it starts from rises instead, and a warmup longer than the updates it
 * spans never reaches the rate; either would run for tens of minutes as another experiment than
 * the one asked for.
 */
export function scheduleProblem(o: ScheduleOptions): { readonly option: "round-min-lr" | "round-warmup"; readonly message: string } | undefined {
  if (o.minLr !== undefined && o.minLr > o.lr) return { option: "round-min-lr", message: `${o.minLr} is above --round-lr ${o.lr}: the rate decays to it from --round-lr` };
  const updates = o.continue ? o.rounds * o.steps : o.steps;
  if (o.warmup > updates) {
    const over = o.continue ? "--rounds x --round-steps, the rounds continuing each other" : "--round-steps: every round warms up anew";
    return { option: "round-warmup", message: `${o.warmup} updates, more than the ${updates} it warms up over (${over}): the rate would never reach --round-lr` };
  }
  return undefined;
}
