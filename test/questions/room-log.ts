/**
 * A room's episode logged as the simulation room logs it (server/rooms/simulation-room.ts): the
 * scenario of a seed, its seats played by the script or by a random agent (so the story the
 * episode tells is not the script's), the fields the questions driver reads.
 */
import { RandomAgent } from "../../agents/random-agent.js";
import { EpisodeLog } from "../../store/episode-log.js";
import type { RunStore } from "../../store/run-store.js";
import type { Agent } from "../../worlds/core/agent.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { loadScenario } from "../../worlds/registry.js";

/** Logs `seeds.length` episodes of `world` into a new room run; seats named in `random` play at random. */
export async function logRoomRun(store: RunStore, world: string, seeds: readonly number[], random: (agents: readonly string[]) => readonly string[] = () => []) {
  const run = await store.create("room", `${world} room`, { type: "simulation", world });
  const log = new EpisodeLog(store.episodesPath(run));
  const factory = await loadScenario(world);
  let n = 0;
  for (const seed of seeds) {
    const scenario = await factory.create(seed);
    const names = scenario.world.agents(scenario.initialState);
    const randomSeats = new Set(random(names));
    const agents: Record<string, Agent<unknown>> = {};
    for (const a of names) agents[a] = randomSeats.has(a) ? new RandomAgent(seed + 1) : scenario.scripted[a]!;
    const episode = await runEpisode(scenario.world, {
      seed,
      initialState: scenario.initialState,
      agents,
      ...(scenario.director ? { director: scenario.director } : {}),
      maxSteps: scenario.maxSteps ?? 500,
    });
    log.append({
      kind: "room_episode",
      run: run.id,
      world,
      seed,
      episode: ++n,
      end: episode.end,
      socialized_context: toSocializedContext(episode),
      turns: episode.turns.map((t) => ({ agent: t.agent, timestep: t.timestep, action: t.action, actionText: t.actionText, source: t.source })),
    });
  }
  log.close();
  return run;
}
