/** A room scenario played by its script (worlds/<world>/scenario.ts): what the audit tests replay and plant leaks in. */
import type { Agent } from "../../worlds/core/agent.js";
import type { Scenario } from "../../worlds/core/scenario.js";
import { loadScenario } from "../../worlds/registry.js";
import type { Episode } from "../../worlds/core/episode.js";
import type { AuditTurn } from "../../worlds/core/leak-audit.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import type { SocializedContext } from "../../worlds/core/socialized-context.js";

export interface Played {
  readonly scenario: Scenario;
  readonly episode: Episode<unknown>;
  readonly context: SocializedContext;
  /** The script's turns as a log has them. */
  readonly turns: AuditTurn[];
  /** The last timestep (after the script's end: only observations). */
  readonly last: number;
}

export async function playScripted(world: string, seed: number): Promise<Played> {
  const scenario = await (await loadScenario(world)).create(seed);
  const episode = await runEpisode(scenario.world, {
    seed,
    initialState: scenario.initialState,
    agents: scenario.scripted as Record<string, Agent<unknown>>,
    ...(scenario.director ? { director: scenario.director } : {}),
    ...(scenario.maxSteps !== undefined ? { maxSteps: scenario.maxSteps } : {}),
  });
  const context = toSocializedContext(episode);
  const turns = episode.turns.map((t) => ({ agent: t.agent, timestep: t.timestep, action: t.action, actionText: t.actionText }));
  return { scenario, episode, context, turns, last: episode.steps.length };
}
