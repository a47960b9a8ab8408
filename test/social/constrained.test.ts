/**
 * Constrained decoding (models/grammar) on the social world's schemas: the benchmark's question
 * (one of the four reactions, on one item) and a room turn's actions (reactions on the items on
 * screen, closing the app, a new post) compile to automata whose every text is an action zod
 * accepts, and that accept every action the world lists as valid and every label the generator writes.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compileBytes } from "../../models/grammar/index.js";
import { Rng } from "../../worlds/core/rng.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { generateSocial, playableScenario, reactionSchemaFor, socialScenario, tasksOf, parseTrees, labelReply, type SocialState } from "../../worlds/social/index.js";
import { randomText, textOf } from "../grammar/helpers.js";

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
});
