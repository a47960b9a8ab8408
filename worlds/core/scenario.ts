/**
 * What a live room (and a world's GRPO training) plays: a world, its initial state, the
 * environment's script (a story's narrator), and the agent that plays each seat when no person
 * does. Rooms are generic over this; each world makes its own from a seed (its index.ts).
 */
import type { z } from "zod";
import type { Agent } from "./agent.js";
import type { Director } from "./loop.js";
import type { World } from "./world.js";

export interface Scenario<S = unknown, A = unknown, X = unknown> {
  readonly world: World<S, A, X>;
  /** What this episode is ("ToMi: false belief story"). */
  readonly title: string;
  readonly initialState: S;
  readonly director?: Director<S, X>;
  /** The agent that plays each seat when nobody else does (a story's script). */
  readonly scripted: Readonly<Record<string, Agent<A>>>;
  readonly maxSteps?: number;
}

export interface ScenarioFactory {
  /** What one episode is called in room titles ("stories", "conversations"). */
  readonly episodes: string;
  readonly describe: string;
  /**
   * The world's own settings for its episodes (a simulation room's `worldOptions`), checked when
   * the room is created; absent: the world takes none. `create` gets them parsed by this schema.
   */
  readonly options?: z.ZodType;
  /** A new episode's scenario; the same seed (and options) give the same scenario. */
  create(seed: number, options?: unknown): Promise<Scenario>;
}
