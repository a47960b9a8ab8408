/**
 * Self-play's decision points (trainers/grpo/self-play-points.ts): a round learns from its own
 * episodes, rewarded by them. A quiz point's reward is exact match with the world model's label;
 * a played turn's is validity (and the world's own reward), whatever the story's script did there.
 */
import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { z } from "zod";
import { RandomAgent } from "../../agents/random-agent.js";
import { writeQuestions } from "../../benchmarks/episode-questions.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import { scoreGroup } from "../../trainers/grpo/reward.js";
import { selfPlayPoints, type SelfPlayEpisode } from "../../trainers/grpo/self-play-points.js";
import { TurnPoints, VALID_ACTION_REWARD } from "../../trainers/grpo/turn-points.js";
import type { Agent } from "../../worlds/core/agent.js";
import type { EpisodeQuestion } from "../../worlds/core/episode-questions.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import type { World } from "../../worlds/core/world.js";
import { loadQuestionMaker, loadScenario } from "../../worlds/registry.js";
import { tempDir } from "../policy/fixtures.js";

const reply = (text: string) => ({ text, tokens: 3, finish: "stop", logprob: -1 });
const settings = GrpoConfigSchema.parse({ maxNewTokens: 16 });

/** A ToMi episode a room played (its first seat at random unless `random: false`: not the script's story), with its quiz written as the room writes it. */
async function playedEpisode(seed: number, dir: string, opts: { random?: boolean } = {}): Promise<{ episode: SelfPlayEpisode; questions: readonly EpisodeQuestion[]; scripted: Map<string, unknown> }> {
  const scenario = await (await loadScenario("tomi")).create(seed);
  const names = scenario.world.agents(scenario.initialState);
  const agents: Record<string, Agent<unknown>> = {};
  for (const a of names) agents[a] = a === names[0] && opts.random !== false ? new RandomAgent(seed) : scenario.scripted[a]!;
  const states: unknown[] = [scenario.initialState];
  const played = await runEpisode(scenario.world, {
    seed,
    initialState: scenario.initialState,
    agents,
    ...(scenario.director ? { director: scenario.director } : {}),
    maxSteps: scenario.maxSteps ?? 100,
    onTimestep: (_rec, next) => {
      states.push(next);
    },
  });
  const maker = await loadQuestionMaker("tomi");
  const quiz = await maker.fromEpisode(played, scenario.initialState, `episode of seed ${seed}`);
  const written = await writeQuestions("tomi", [quiz], join(dir, `episode-${seed}.txt`), seed);
  // What the script would have done at each of the random seat's turns.
  const scripted = new Map<string, unknown>();
  const turns = played.turns.filter((t) => t.agent === names[0]);
  for (const t of turns) {
    const state = states[t.timestep - 1];
    const action = (await scenario.scripted[t.agent]!.act({ world: "tomi", agent: t.agent, timestep: t.timestep, observation: t.observation, actionSchema: scenario.world.actionSchema(state, t.agent) } as never)).action;
    scripted.set(`${t.timestep}`, action);
  }
  return {
    questions: quiz.questions,
    scripted,
    episode: {
      seed,
      title: scenario.title,
      context: toSocializedContext(played, { mentalStates: false }),
      quizFile: written.set.data,
      turns: turns.map((t) => ({
        agent: t.agent,
        timestep: t.timestep,
        observation: t.observation.text,
        state: states[t.timestep - 1],
        joint: Object.fromEntries(played.turns.filter((u) => u.timestep === t.timestep).map((u) => [u.agent, u.action])),
        exogenous: played.steps[t.timestep - 1]?.exogenous ?? [],
      })),
    },
  };
}

describe("self-play points", () => {
  it("rewards a quiz point by exact match with the world model's label, asked as the room asks it", async () => {
    const dir = tempDir("sw-selfplay-points-");
    const { episode, questions } = await playedEpisode(11, dir);
    const world = (await (await loadScenario("tomi")).create(11)).world;
    const { quizzes, all } = await selfPlayPoints(world, [episode], { turns: false });
    expect(quizzes).toHaveLength(1);
    expect(all.size).toBe(questions.length);
    const containers = [...new Set(questions.flatMap((q) => (typeof q.answer === "string" ? [q.answer] : [])))];
    for (let i = 0; i < all.size; i++) {
      const p = await all.point(i);
      const label = questions[i]!.answer as string;
      // The room's question, in the benchmark's vanilla prompt: the story, then the question.
      expect(p.messages.at(-1)!.content).toContain(questions[i]!.question);
      const wrong = containers.find((c) => c !== label) ?? "nowhere_at_all";
      const [right, other, malformed] = await scoreGroup(p, [reply(label), reply(wrong), reply('{"answer": ')], settings);
      expect(right).toMatchObject({ format: true, exact: 1, reward: 1 });
      expect(other).toMatchObject({ format: true, exact: 0, reward: 0 });
      expect(malformed).toMatchObject({ format: false, reward: settings.formatFailure });
    }
  });

  it("rewards a played turn by validity, whatever the script did: no imitation", async () => {
    const dir = tempDir("sw-selfplay-points-");
    // The first seat plays the script here, so that the script's action is valid where it is asked.
    const { episode, scripted } = await playedEpisode(12, dir, { random: false });
    const world = (await (await loadScenario("tomi")).create(12)).world;
    const src = new TurnPoints(world, [episode]);
    expect(src.size).toBe(episode.turns.length);
    expect(src.size).toBeGreaterThan(0);
    let differs = 0;
    for (let i = 0; i < src.size; i++) {
      const p = await src.point(i);
      const turn = episode.turns[i]!;
      expect(p.reference).toBe("");
      const script = scripted.get(`${turn.timestep}`);
      const noop = world.noop(turn.state, turn.agent);
      const others = (world.options?.(turn.state, turn.agent) ?? []).map((a) => JSON.stringify(a));
      const [asScript, idle, bad, ...valid] = await scoreGroup(p, [reply(JSON.stringify(script)), reply(JSON.stringify(noop)), reply("walks to the moon"), ...others.map(reply)], settings);
      // The script's action, doing nothing, and any other valid action: the same reward.
      expect(asScript).toMatchObject({ format: true, reward: VALID_ACTION_REWARD });
      expect(idle).toMatchObject({ format: true, reward: VALID_ACTION_REWARD });
      for (const v of valid) expect(v).toMatchObject({ format: true, reward: VALID_ACTION_REWARD });
      expect(bad).toMatchObject({ format: false, reward: settings.formatFailure });
      if (JSON.stringify(script) !== JSON.stringify(noop)) differs++;
    }
    expect(differs).toBeGreaterThan(0);
  });

  it("adds the world's own reward for the reply, stepped in the state the agent acted in, with the others' actions as played", async () => {
    // A world that pays an agent its number when it says a number no other agent said.
    type S = { t: number };
    const Act = z.object({ type: z.enum(["say", "none"]), n: z.number().int().min(0).max(9).optional() });
    type A = z.infer<typeof Act>;
    const world: World<S, A> = {
      name: "numbers",
      agents: () => ["a", "b"],
      actionSchema: () => Act,
      noop: () => ({ type: "none" }),
      isNoop: (a) => a.type === "none",
      observe: () => ({ text: "say a number" }),
      describe: () => "none",
      renderAction: (_s, _g, a) => (a.type === "say" ? `says ${a.n}` : "none"),
      check: (_s, _g, a) => (a.type === "say" && a.n === undefined ? "say what?" : undefined),
      step: (s, actions) => {
        const said = [...actions.values()].filter((a) => a.type === "say").map((a) => a.n);
        const rewards: Record<string, number> = {};
        for (const [g, a] of actions) rewards[g] = a.type === "say" && said.filter((n) => n === a.n).length === 1 ? a.n! : 0;
        return { state: { t: s.t + 1 }, events: [], rewards };
      },
      isTerminal: (s) => s.t >= 1,
    };
    const episode: SelfPlayEpisode = {
      seed: 1,
      title: "numbers",
      context: { agents_names: ["a", "b"], socialized_context: [] },
      turns: [{ agent: "a", timestep: 1, observation: "say a number", state: { t: 0 }, joint: { a: { type: "none" }, b: { type: "say", n: 3 } }, exogenous: [] }],
    };
    const p = await new TurnPoints(world, [episode]).point(0);
    const [seven, three, unsaid] = await scoreGroup(p, [reply('{"type":"say","n":7}'), reply('{"type":"say","n":3}'), reply('{"type":"say"}')], settings);
    expect(seven).toMatchObject({ format: true, reward: VALID_ACTION_REWARD + 7 });
    // b said 3 at that timestep: saying it too earns nothing beyond validity.
    expect(three).toMatchObject({ format: true, reward: VALID_ACTION_REWARD });
    expect(unsaid).toMatchObject({ format: false, reward: settings.formatFailure, formatError: expect.stringMatching(/refuses it: say what/) });
  });

  it("a round's points are its episodes' quiz questions and played turns, nothing else", async () => {
    const dir = tempDir("sw-selfplay-points-");
    const a = await playedEpisode(13, dir);
    const b = await playedEpisode(14, dir);
    const world = (await (await loadScenario("tomi")).create(13)).world;
    const { all, quizzes, turns } = await selfPlayPoints(world, [a.episode, b.episode]);
    expect(quizzes.map((q) => q.file)).toEqual([a.episode.quizFile, b.episode.quizFile]);
    expect(all.size).toBe(a.questions.length + b.questions.length + a.episode.turns.length + b.episode.turns.length);
    expect(turns!.size).toBe(a.episode.turns.length + b.episode.turns.length);
    const ids = await Promise.all(Array.from({ length: all.size }, async (_, i) => (await all.point(i)).id));
    expect(ids.filter((id) => id.startsWith("turn:")).length).toBe(turns!.size);
    await expect(selfPlayPoints(world, [{ ...a.episode, quizFile: undefined, turns: [] } as SelfPlayEpisode])).rejects.toThrow(/nothing to learn from/);
  });
});
