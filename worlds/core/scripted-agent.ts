/** Plays a fixed script: at each timestep, the action the script gives this agent (or nothing). */
import type { Agent, AgentReply, AgentTurn } from "./agent.js";

export class ScriptedAgent<A> implements Agent<A> {
  readonly id = "scripted";
  readonly trusted = true;

  /** `actions.get(t)` is the agent's action at timestep t; others are `noop`. */
  constructor(
    private readonly actions: ReadonlyMap<number, A>,
    private readonly noop: A,
  ) {}

  act(turn: AgentTurn<A>): AgentReply<A> {
    return { action: this.actions.get(turn.timestep) ?? this.noop };
  }
}
