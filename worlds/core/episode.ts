/** What the game loop records: every timestep's state, observations, actions and mental states. */
import type { Observation, WorldEvent } from "./world.js";

/** Why a turn's own answer was not used: its time ran out, the agent failed, or its action was refused. */
export type TurnFailure = "timeout" | "error" | "invalid";

export interface TurnRecord {
  readonly agent: string;
  readonly timestep: number;
  readonly observation: Observation;
  readonly prompt?: string;
  readonly raw?: string;
  /** The action as applied (after validation or fallback). */
  readonly action: unknown;
  readonly actionText: string;
  /** Who produced the applied action. */
  readonly source: "agent" | "fallback";
  /** Why the fallback was used (timeout, invalid action, agent error). */
  readonly error?: string;
  /** The kind of that failure, for code that acts on it (the error is for people). */
  readonly failure?: TurnFailure;
  readonly reward?: number;
  readonly latencyMs: number;
  readonly info?: Readonly<Record<string, unknown>>;
}

export interface TimestepRecord {
  readonly timestep: number;
  /** The `state` field of the socialized context. */
  readonly state: string;
  readonly observations: Readonly<Record<string, Observation>>;
  /** Rendered actions ("none" for no-ops), by agent. */
  readonly actions: Readonly<Record<string, string>>;
  readonly mentalStates: Readonly<Record<string, string | undefined>>;
  /** Events the timestep's actions caused (they appear in the next timestep's state). */
  readonly events: readonly WorldEvent[];
  /** What the environment imposed this timestep (a narrator's statements), when anything. */
  readonly exogenous?: readonly unknown[];
  readonly rewards?: Readonly<Record<string, number>>;
}

export interface Episode<S = unknown> {
  readonly world: string;
  readonly seed: number | string;
  readonly agents: readonly string[];
  readonly steps: readonly TimestepRecord[];
  /** Turns where an agent could act (no-op turns of scripted agents are left out). */
  readonly turns: readonly TurnRecord[];
  readonly finalState: S;
  readonly returns: Readonly<Record<string, number>>;
  /** Why the loop stopped. */
  readonly end: "terminal" | "max_steps" | "aborted";
}
