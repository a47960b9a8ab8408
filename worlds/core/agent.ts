/**
 * The agent interface of the game loop. An agent sees one observation and the schema its action
 * must satisfy, and answers (possibly slowly: the loop enforces the deadline, not the agent).
 */
import type { z } from "zod";
import type { Observation } from "./world.js";

export interface AgentTurn<A = unknown> {
  readonly world: string;
  readonly agent: string;
  readonly timestep: number;
  /**
   * The episode's seed, when the turn is part of a seeded episode (the game loop sets it): an
   * agent that samples draws from a stream of its own per episode, so that a looping room's
   * episodes, whose turns share world, agent and timestep, do not repeat each other's draws.
   */
  readonly episode?: number | string;
  readonly observation: Observation;
  readonly actionSchema: z.ZodType<A>;
  /** Every valid action, when the world can list them (a person's action form, the random baseline). */
  readonly options?: readonly A[];
  /** Epoch milliseconds after which the loop stops waiting and uses the fallback. */
  readonly deadline?: number;
  /** Aborted when the deadline passes or the episode is cancelled. */
  readonly signal?: AbortSignal;
}

export interface AgentReply<A = unknown> {
  readonly action: A;
  /** The exact text a model was given, when there is one (kept in the episode log for training). */
  readonly prompt?: string;
  /** The model's raw output before parsing. */
  readonly raw?: string;
  /** Anything else worth logging (a generated socialized context, token counts, a reasoning trace). */
  readonly info?: Readonly<Record<string, unknown>>;
}

export interface Agent<A = unknown> {
  /** A short name for reports: "simulation", "random", "scripted", "human:alice". */
  readonly id: string;
  /**
   * Internal agents whose actions are valid by construction skip schema validation (it is the
   * hot path of replaying thousands of stories); external input (people, models) never does.
   */
  readonly trusted?: boolean;
  act(turn: AgentTurn<A>): AgentReply<A> | Promise<AgentReply<A>>;
  /**
   * Why the agent cannot answer this world's questions in this mode at all (a policy asked to
   * write a context the world does not define), so that a benchmark refuses it before the first
   * question instead of failing every one; undefined where it can.
   */
  refusal?(world: string, mode: "vanilla" | "simulation"): Promise<string | undefined>;
}

/**
 * An agent whose time ran out on its own terms (a person who did not act before the seat's
 * deadline): the loop counts the turn as timed out, as when its own deadline passes.
 */
export class TurnTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TurnTimeout";
  }
}

/**
 * An agent's failure, with what it had done by then: the prompt it sent, the replies it could not
 * use, its calls. The game loop logs these with the turn beside the fallback's action, so a failed
 * turn of a model is as inspectable (and as usable for training on its mistakes) as a good one.
 */
export class AgentFailure extends Error {
  constructor(
    message: string,
    readonly partial: Omit<AgentReply, "action">,
  ) {
    super(message);
    this.name = "AgentFailure";
  }
}
