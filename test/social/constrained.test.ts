/**
 * Constrained decoding (models/grammar) on the social world's schemas: the benchmark's question
 * (one of the four reactions, on one item) and a room turn's actions (reactions on the items on
 * screen, closing the app, a new post) compile to automata whose every text is an action zod
 * accepts, and that accept every action the world lists as valid and every label the generator writes;
 * a policy asked the benchmark's question writes its answer in the reaction's grammar.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compileBytes } from "../../models/grammar/index.js";
import { Rng } from "../../worlds/core/rng.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { generateSocial, playableScenario, reactionSchemaFor, socialScenario, tasksOf, parseTrees, labelReply, type SocialState } from "../../worlds/social/index.js";
import { randomText, textOf } from "../grammar/helpers.js";
import { actionSpec } from "../../agents/policy/action-grammar.js";
import { loadAgent } from "../../agents/registry.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { readReply } from "../../worlds/social/scoring.js";
import type { SocialBenchmark } from "../../worlds/social/benchmark.js";
import { AnswerSchema, QuestionWorld } from "../../worlds/question/world.js";
import { tempDir, tinyCheckpoint } from "../policy/fixtures.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

const UTF8 = new TextEncoder();

function sampled(schema: z.ZodType, seed: string): void {
  const a = compileBytes({ type: "json_schema", schema: z.toJSONSchema(schema) });
  const rng = Rng.seeded(seed);
  for (let i = 0; i < 25; i++) {
    const text = textOf(randomText(a, rng, 200));
    expect(schema.safeParse(JSON.parse(text)).success, text).toBe(true);
  }
}

describe("constrained decoding on the social world", () => {
  it("the benchmark's reaction schema: sampled texts are actions, every label is accepted", () => {
    sampled(reactionSchemaFor("c3"), "social-reaction");
    const trees = parseTrees(generateSocial(3, 5).jsonl, "gen.jsonl");
    const tasks = tasksOf(trees);
    expect(tasks.length).toBeGreaterThan(5);
    for (const task of tasks) {
      const a = compileBytes({ type: "json_schema", schema: z.toJSONSchema(reactionSchemaFor(task.parent)) });
      expect(a.matches(UTF8.encode(labelReply(task))), labelReply(task)).toBe(true);
    }
  });

  it("a room turn's schema: sampled texts are actions, every option the world lists is accepted", async () => {
    const sc = playableScenario(socialScenario(2, { users: 30, posts: 2, every: 2 }));
    // Play until someone's screen has items on it.
    let found: { state: SocialState; agent: string } | undefined;
    await runEpisode(sc.world, {
      seed: 2,
      initialState: sc.initialState,
      agents: sc.scripted,
      director: sc.director!,
      maxSteps: 40,
      mentalStates: false,
      onTimestep: (_rec, state) => {
        if (found) return;
        const agent = sc.world.agents(state).find((a) => (sc.world.options?.(state, a) ?? []).length > 3);
        if (agent) found = { state, agent };
      },
    });
    expect(found).toBeDefined();
    const schema = sc.world.actionSchema(found!.state, found!.agent) as z.ZodType;
    sampled(schema, "social-turn");
    const a = compileBytes({ type: "json_schema", schema: z.toJSONSchema(schema) });
    for (const action of sc.world.options?.(found!.state, found!.agent) ?? []) expect(a.matches(UTF8.encode(JSON.stringify(action))), JSON.stringify(action)).toBe(true);
    expect(a.matches(UTF8.encode(JSON.stringify({ action: "post", content: "Hello." })))).toBe(true);
    expect(a.matches(UTF8.encode(JSON.stringify({ action: "like", target: "p999" })))).toBe(false);
  });

  it("a policy answers the benchmark's question in the reaction's grammar: every reply is a strict action on the asked item", async () => {
    // Before, the question world's `{answer}` made the grammar one free line of text: an
    // untrained policy's replies were not actions, and a trained one's named the wrong item (the
    // post for a depth-1 question), which the scorer counts as invalid.
    const dir = tempDir("sw-social-policy-");
    writeFileSync(join(dir, "t.jsonl"), generateSocial(2, 4).jsonl);
    const bench = (await loadBenchmark("social")) as SocialBenchmark;
    const items = bench.load(join(dir, "t.jsonl"));
    const picked = [items.find((i) => i.task.depth === 0)!, items.find((i) => i.task.depth === 1)!];
    const { dir: model } = await tinyCheckpoint(5);
    const agent = await loadAgent(`policy:${model}?max_new_tokens=24&temperature=1&seed=3`);
    const world = new QuestionWorld(() => 0);
    for (const item of picked) {
      const q = bench.task(item, "vanilla");
      expect(q.answerForm).toEqual({ type: "json", schema: z.toJSONSchema(reactionSchemaFor(item.task.parent)) });
      expect(actionSpec(AnswerSchema, q.candidates!.map((answer) => ({ answer })), "schema", q.answerForm)).toEqual({ type: "json_schema", schema: z.toJSONSchema(reactionSchemaFor(item.task.parent)) });
      // The prompt's last line is enough to ask it (the tiny model's context is short).
      const short = { ...q, prompt: q.prompt.slice(q.prompt.lastIndexOf("\n") + 1) };
      const state = QuestionWorld.initial(short);
      for (let t = 0; t < 4; t++) {
        const reply = await agent.act({ world: "question", agent: "respondent", timestep: t, observation: world.observe(state), actionSchema: AnswerSchema, options: world.options(state) });
        const answer = (reply.action as { answer: string }).answer;
        const read = readReply(answer, item.task);
        expect(read.strict, answer).toBe(true);
        expect(read.action!.target).toBe(item.task.parent);
      }
    }
    // The options grammar still picks among the listed answers; a question without a format of its own is one line of text.
    expect(actionSpec(AnswerSchema, [{ answer: "a" }, { answer: "b" }], "options", { type: "json", schema: { type: "object" } })).toEqual({ type: "choice", choices: ["a", "b"] });
    expect(actionSpec(AnswerSchema, undefined, "schema")).toMatchObject({ type: "text", singleLine: true });
  });
});
