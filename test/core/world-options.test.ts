/**
 * The story worlds list every action valid now (`options`): what the random baseline picks from
 * in simulation rooms and what a person's action form offers as buttons. Each listed action is
 * one `check` allows, and a room of random agents plays without a single fallback.
 */
import { describe, expect, it } from "vitest";
import { RandomAgent } from "../../agents/random-agent.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { loadScenario } from "../../worlds/registry.js";

describe("world options", () => {
  for (const name of ["tomi", "hitom", "fantom"]) {
    it(`${name}: random agents play from the listed actions, every one of them valid`, async () => {
      const scenario = await (await loadScenario(name)).create(7);
      const world = scenario.world;
      const names = world.agents(scenario.initialState);
      const agents = Object.fromEntries(names.map((n, i) => [n, new RandomAgent(i + 1)]));
      const episode = await runEpisode(world, { seed: 7, initialState: scenario.initialState, agents, maxSteps: 12 });
      expect(episode.turns.length).toBeGreaterThan(0);
      expect(episode.turns.filter((t) => t.source === "fallback").map((t) => t.error)).toEqual([]);
      expect(episode.turns.some((t) => !world.isNoop(t.action as never))).toBe(true);
      for (const step of [scenario.initialState, episode.finalState]) {
        for (const agent of names) {
          const options = world.options!(step as never, agent)!;
          expect(options.length).toBeGreaterThan(1);
          for (const o of options) expect(world.check!(step as never, agent, o as never), JSON.stringify(o)).toBeUndefined();
        }
      }
    });
  }
});
