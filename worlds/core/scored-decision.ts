/**
 * Decision points a world scores itself: an agent's turn with the world's own reward of any
 * action there, graded in [0, 1], instead of a reference action to match. The economy's
 * household-months are such points (the best decision is known exactly from the path that
 * followed, and every decision's utility is computed from it). A trainer asks the observation and
 * rewards a well-formed reply with `reward` (`train grpo --world economy`).
 */
import type { z } from "zod";
import type { SocializedContext } from "./socialized-context.js";

export interface ScoredDecision {
  /** Stable across runs (a trainer's data position, logs). */
  readonly id: string;
  readonly agent: string;
  readonly timestep: number;
  /** The seed of the episode the point comes from. */
  readonly seed: number;
  readonly title: string;
  /** What the agent is asked (the user message). */
  readonly observation: string;
  readonly schema: z.ZodType<unknown>;
  /** The best action there. */
  readonly best: unknown;
  /** The world's reward of a well-formed action, in [0, 1] (1: as good as the best). */
  reward(action: unknown): number;
  /** An action as the socialized context writes it. */
  render(action: unknown): string;
  /** The turn as a socialized context (what the agent observed, the best action taken). */
  readonly context: SocializedContext;
}

export interface DecisionSet {
  readonly describe: string;
  /** `count` points from the world's episode seeded `seed`; the same arguments give the same points. */
  points(count: number, seed: number): Promise<readonly ScoredDecision[]>;
}
