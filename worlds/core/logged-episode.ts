/**
 * A room's logged episode played again: its scenario (rebuilt from the world and seed), the
 * actions its log recorded for each turn, and the scenario's director. Worlds are pure, so the
 * replay is the episode; each timestep's state is checked against the logged socialized context,
 * and a difference is an error naming the timestep (a log from another version of the world, or
 * edited by hand, is not silently read as something else).
 */
import type { Agent, AgentReply, AgentTurn } from "./agent.js";
import type { Episode } from "./episode.js";
import { runEpisode } from "./loop.js";
import type { Scenario } from "./scenario.js";
import type { SocializedContext } from "./socialized-context.js";

export interface LoggedTurn {
  readonly agent: string;
  readonly timestep: number;
  readonly action: unknown;
}

/** A logged episode that does not replay: where, and what differs. */
export class ReplayMismatch extends Error {
  constructor(
    readonly source: string,
    readonly timestep: number,
    message: string,
  ) {
    super(`${source}: timestep ${timestep}: ${message}`);
    this.name = "ReplayMismatch";
  }
}

/** Plays back one agent's logged actions (trusted: the world checked them when they were played). */
class LoggedActions implements Agent {
  readonly id = "logged";
  readonly trusted = true;
  constructor(
    private readonly actions: ReadonlyMap<number, unknown>,
    private readonly noop: unknown,
  ) {}

  act(turn: AgentTurn): AgentReply {
    return { action: this.actions.has(turn.timestep) ? this.actions.get(turn.timestep) : this.noop };
  }
}

export async function replayLogged(scenario: Scenario, seed: number, turns: readonly LoggedTurn[], context: SocializedContext, source: string): Promise<Episode> {
  const { world, initialState } = scenario;
  const names = world.agents(initialState);
  if (names.length !== context.agents_names.length || names.some((n, i) => n !== context.agents_names[i])) {
    throw new ReplayMismatch(source, 0, `the scenario of seed ${seed} has agents ${names.join(", ")}, the log ${context.agents_names.join(", ")}`);
  }
  const byAgent = new Map<string, Map<number, unknown>>(names.map((n) => [n, new Map()]));
  for (const t of turns) byAgent.get(t.agent)?.set(t.timestep, t.action);
  const agents: Record<string, Agent> = {};
  for (const n of names) agents[n] = new LoggedActions(byAgent.get(n)!, world.noop(initialState, n));
  const steps = context.socialized_context;
  const episode = await runEpisode(world, {
    seed,
    initialState,
    agents,
    ...(scenario.director ? { director: scenario.director } : {}),
    // The last logged timestep only observes: one acting timestep fewer.
    maxSteps: Math.max(0, steps.length - 1),
    strict: true,
    mentalStates: false,
  });
  for (let i = 0; i < steps.length; i++) {
    const replayed = episode.steps[i];
    const logged = steps[i]!;
    if (!replayed) throw new ReplayMismatch(source, i + 1, `the log has ${steps.length} timesteps, the replay ${episode.steps.length}`);
    const state = replayed.state === "" ? "none" : replayed.state;
    if (state !== logged.state) throw new ReplayMismatch(source, i + 1, `the logged state is "${logged.state}", the replay's "${state}"`);
  }
  if (episode.steps.length !== steps.length) throw new ReplayMismatch(source, steps.length, `the log has ${steps.length} timesteps, the replay ${episode.steps.length}`);
  return episode;
}
