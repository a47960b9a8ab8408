/**
 * The random baseline: a uniformly random valid action. The draw is seeded by the agent's seed and
 * the turn (world, agent, timestep, and the question's id), so results do not depend on the order
 * in which concurrent items run.
 */
import type { Agent, AgentReply, AgentTurn } from "../worlds/core/agent.js";
import { Rng } from "../worlds/core/rng.js";

export class RandomAgent<A = unknown> implements Agent<A> {
  readonly id: string;

  constructor(private readonly seed = 0) {
    this.id = seed === 0 ? "random" : `random:${seed}`;
  }

  act(turn: AgentTurn<A>): AgentReply<A> {
    const options = turn.options;
    if (!options || options.length === 0) throw new Error(`no listed actions for ${turn.agent} in ${turn.world}`);
    const item = (turn.observation.data as { itemId?: string } | undefined)?.itemId ?? "";
    const rng = Rng.seeded(`${this.seed}|${turn.world}|${turn.agent}|${turn.timestep}|${item}`);
    return { action: rng.pick(options) };
  }
}
