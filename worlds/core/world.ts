/**
 * A world is a model: a seeded initial state, one observation per agent (partial observability),
 * one action per agent, a transition, termination, optional rewards, and hidden mental states.
 *
 * Worlds are pure: `step` returns a new state and never mutates its input, all randomness comes
 * from the Rng it is handed, and nothing here does I/O. That is what lets an episode replay
 * exactly from its seed and its recorded actions.
 */
import type { z } from "zod";
import type { Rng } from "./rng.js";

/** What one agent perceives at a timestep, before it acts. */
export interface Observation {
  /** Natural-language rendering; "" when the agent perceives nothing. */
  readonly text: string;
  /** True when the agent perceives the whole state (written as `<same_as_state />`). */
  readonly sameAsState?: boolean;
  /** Structured form for programs (scripted and symbolic agents, the web client). */
  readonly data?: unknown;
}

/** Something that happened during a transition, and who perceived it. */
export interface WorldEvent {
  readonly text: string;
  readonly observers: readonly string[];
  /** Who caused it; absent for the environment or the narrator. */
  readonly actor?: string;
  readonly data?: unknown;
}

export interface StepResult<S> {
  readonly state: S;
  readonly events: readonly WorldEvent[];
  readonly rewards?: Readonly<Record<string, number>>;
}

export interface StepContext<X> {
  readonly rng: Rng;
  /** Events the environment imposes this timestep (a story's narrator, a scenario script). */
  readonly exogenous: readonly X[];
}

/**
 * S: state, A: an agent's action, X: an exogenous (environment) event.
 * The "none" action must be valid for every agent at every timestep.
 */
export interface World<S, A, X = never> {
  readonly name: string;
  /** The agents, in the order of the socialized context's `agents_names`. */
  agents(state: S): readonly string[];
  /** The zod schema an action of `agent` must satisfy now (drives validation and JSON-schema prompts). */
  actionSchema(state: S, agent: string): z.ZodType<A>;
  /** The action that does nothing. */
  noop(state: S, agent: string): A;
  /** True for the no-op action (rendered as `none`). */
  isNoop(action: A): boolean;
  /** What `agent` perceives of `state` (the state before this timestep's actions). */
  observe(state: S, agent: string): Observation;
  /** The socialized context's `state` field: what is happening now ("none" when nothing is). */
  describe(state: S): string;
  /** An action as the socialized context writes it, without the agent's name ("moves the apple to the box"). */
  renderAction(state: S, agent: string, action: A): string;
  /** Every valid action of `agent` now, when the world can list them (finite action spaces). */
  options?(state: S, agent: string): readonly A[] | undefined;
  /** Checks an action against the current state; returns a reason when it cannot be applied. */
  check?(state: S, agent: string, action: A): string | undefined;
  step(state: S, actions: ReadonlyMap<string, A>, ctx: StepContext<X>): StepResult<S>;
  isTerminal(state: S): boolean;
  /** The agent's hidden mental state after perceiving `state` (beliefs, goals), or undefined. */
  mentalState?(state: S, agent: string): string | undefined;
  /**
   * What the world's spectators plot of `state` after a timestep, as JSON (the world perspective's
   * data; a seat never receives it). Absent: nothing beyond the state's text.
   */
  view?(state: S): unknown;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyWorld = World<any, any, any>;
