/**
 * A self-play seat (`policy:DIR?temperature=1&answer_temperature=0&constrain=options`): its
 * actions are sampled among the world's valid ones, every option reachable whatever
 * `max_new_tokens` says, so that its stories have entries, moves and exits; its answers to a
 * quiz are greedy, the same as a temperature-0 agent's. Its draws are seeded by the episode too:
 * a looping room's episodes do not repeat each other's.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LanguageModelAgent } from "../../agents/policy/lm-agent.js";
import { actionSpec, choiceBudget } from "../../agents/policy/action-grammar.js";
import { LmAgentOptionsSchema, parseAgentTarget } from "../../agents/policy/options.js";
import { NativeCompleter } from "../../models/generate.js";
import type { AgentTurn } from "../../worlds/core/agent.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { QuestionWorld, type QuestionTask } from "../../worlds/question/world.js";
import { loadScenario } from "../../worlds/registry.js";
import { tinyModel } from "./fixtures.js";

async function seat(query: Record<string, string>): Promise<LanguageModelAgent> {
  const m = await tinyModel(27);
  const completer = new NativeCompleter("tiny", m.model, m.tokenizer);
  return new LanguageModelAgent("policy:tiny", async () => ({ completer, tokenizer: m.tokenizer }), LmAgentOptionsSchema.parse(query));
}

/** A ToMi agent's first turn (in no room yet: `none`, or enter one of the rooms), at `timestep`. */
async function tomiTurns(n: number): Promise<AgentTurn[]> {
  const sc = await (await loadScenario("tomi")).create(3);
  const [agent] = sc.world.agents(sc.initialState);
  return Array.from({ length: n }, (_, i) => ({
    world: "tomi",
    agent: agent!,
    timestep: i + 1,
    observation: sc.world.observe(sc.initialState, agent!),
    actionSchema: sc.world.actionSchema(sc.initialState, agent!) as z.ZodType,
    options: sc.world.options!(sc.initialState, agent!),
  }));
}

/** Quiz questions as the question world asks them, answers among the story's containers. */
function questionTurns(n: number): AgentTurn[] {
  const world = new QuestionWorld(() => 0);
  return Array.from({ length: n }, (_, i) => {
    const task: QuestionTask = {
      benchmark: "tomi",
      itemId: `q${i}`,
      mode: "vanilla",
      story: `Ella entered the garage. The spinach is in the green_crate. Ella moved the spinach to the blue_box.`,
      question: i % 2 ? "Where is the spinach?" : "Where was the spinach at the beginning?",
      candidates: ["green_crate", "blue_box", "red_basket", "yellow_bucket"],
      prompt: `Story ${i}. Ella entered the garage. The spinach is in the green_crate. Ella moved the spinach to the blue_box.\nWhere is the spinach?`,
    };
    const state = QuestionWorld.initial(task);
    return { world: "question", agent: "respondent", timestep: 1 + (i % 3), observation: world.observe(state), actionSchema: world.actionSchema() as z.ZodType, options: world.options(state) };
  });
}

describe("a self-play seat", () => {
  it("reaches every valid action under constrain=options, whatever max_new_tokens says", async () => {
    const turns = await tomiTurns(40);
    const spec = actionSpec(turns[0]!.actionSchema, turns[0]!.options, "options");
    expect(spec).toMatchObject({ type: "choice" });
    // `{"type":"enter","room":"..."}` is the longest option; `{"type":"none"}` the shortest, and
    // the only one a budget of 8 tokens left reachable before (every turn wrote it).
    expect(choiceBudget(spec)).toBeGreaterThan(Buffer.byteLength('{"type":"none"}'));
    const agent = await seat({ temperature: "1", max_new_tokens: "8", constrain: "options" });
    const kinds = new Map<string, number>();
    for (const t of turns) {
      const r = await agent.act(t);
      const type = (r.action as { type: string }).type;
      kinds.set(type, (kinds.get(type) ?? 0) + 1);
    }
    expect([...kinds.keys()].sort()).toEqual(["enter", "none"]);
    expect(kinds.get("enter")).toBeGreaterThanOrEqual(5);
  });

  it("samples its actions and answers its quiz greedily with answer_temperature=0", async () => {
    const sampler = await seat({ temperature: "1.5", answer_temperature: "0", constrain: "options", max_new_tokens: "8" });
    const greedy = await seat({ temperature: "0", constrain: "options", max_new_tokens: "8" });
    const plain = await seat({ temperature: "1.5", constrain: "options", max_new_tokens: "8" });

    // Answers: the sampling seat's equal the greedy agent's on every question; without
    // answer_temperature the same seat samples them (some differ).
    const questions = questionTurns(24);
    const answers = async (a: LanguageModelAgent) => Promise.all(questions.map(async (t) => (await a.act(t)).raw));
    const [mine, best, sampled] = [await answers(sampler), await answers(greedy), await answers(plain)];
    expect(mine).toEqual(best);
    expect(sampled.filter((s, i) => s !== best[i]).length).toBeGreaterThan(0);
    for (const a of mine) expect(["green_crate", "blue_box", "red_basket", "yellow_bucket"]).toContain(a);

    // Actions: sampled (both kinds), where the greedy agent writes one action every turn.
    const turns = await tomiTurns(30);
    const acts = async (a: LanguageModelAgent) => new Set(await Promise.all(turns.map(async (t) => JSON.stringify((await a.act(t)).action))));
    expect((await acts(sampler)).size).toBeGreaterThan(1);
    expect((await acts(greedy)).size).toBe(1);
  });

  it("draws its actions per episode: the same turn in another episode is drawn anew, in the same episode again the same", async () => {
    const agent = await seat({ temperature: "1", constrain: "options", max_new_tokens: "8" });
    // One turn (the same world, agent, timestep and observation) in 40 episodes of a looping room.
    const [turn] = await tomiTurns(1);
    const inEpisode = async (episode: number) => JSON.stringify((await agent.act({ ...turn!, episode })).action);
    const drawn = await Promise.all(Array.from({ length: 40 }, (_, i) => inEpisode(100 + i)));
    const kinds = new Set(drawn.map((a) => JSON.parse(a).type as string));
    expect([...kinds].sort()).toEqual(["enter", "none"]);
    expect(await Promise.all(Array.from({ length: 40 }, (_, i) => inEpisode(100 + i)))).toEqual(drawn);
    // Without the episode's seed every episode drew the same action.
    const unseeded = await Promise.all(Array.from({ length: 10 }, async () => JSON.stringify((await agent.act(turn!)).action)));
    expect(new Set(unseeded).size).toBe(1);
  });

  it("is given the episode's seed by the game loop", async () => {
    const sc = await (await loadScenario("tomi")).create(3);
    const seen: AgentTurn[] = [];
    const spy = { id: "spy", act: (t: AgentTurn) => (seen.push(t), { action: sc.world.noop(sc.initialState, t.agent) }) };
    const agents = Object.fromEntries(sc.world.agents(sc.initialState).map((a) => [a, spy]));
    for (const seed of [7, 8]) await runEpisode(sc.world, { seed, initialState: sc.initialState, agents, maxSteps: 2 });
    expect(new Set(seen.map((t) => t.episode))).toEqual(new Set([7, 8]));
  });

  it("reads answer_temperature from the spec, and refuses a bad one", () => {
    expect(parseAgentTarget("policy:d", "d?temperature=1&answer_temperature=0").options).toMatchObject({ temperature: 1, answer_temperature: 0 });
    expect(parseAgentTarget("policy:d", "d").options.answer_temperature).toBeUndefined();
    expect(() => parseAgentTarget("policy:d", "d?answer_temperature=-1")).toThrow(/answer_temperature/);
  });
});
