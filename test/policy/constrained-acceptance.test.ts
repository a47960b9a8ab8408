/**
 * Issue 26's acceptance: 10,000 actions sampled at temperature 1.0 from an untrained `tiny`
 * policy, across every world's action schema (through the policy agent, as `policy:` seats act:
 * its prompt, its grammar, parseAction) and three /v1 schemas with nested objects, enums, arrays
 * and bounded numbers (through the /v1 engine with the grammar /v1 compiles for response_format):
 * every one parses and validates (zod; for /v1 also zod's reading of the JSON Schema and Python's
 * jsonschema where installed). Budgets are 64 new tokens (raised to what a grammar may need, as
 * the agent raises it; a /v1 client would be refused below it): every text finishes within.
 */
import { describe, expect, it } from "vitest";
import { loadScenario, WORLD_NAMES } from "../../worlds/registry.js";
import { z } from "zod";
import type { AgentTurn } from "../../worlds/core/agent.js";
import { NativeCompleter } from "../../models/generate.js";
import { LanguageModelAgent } from "../../agents/policy/lm-agent.js";
import { LmAgentOptionsSchema } from "../../agents/policy/options.js";
import { PolicyEngine } from "../../server/openai/engine.js";
import { responseGrammar } from "../../server/openai/response-grammar.js";
import { QuestionWorld } from "../../worlds/question/world.js";
import { pythonFailures, V1_SCHEMAS } from "../grammar/v1-schemas.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { CORPUS, PAIRS } from "./fixtures.js";

const TOTAL = 10_000;
const BUDGET = 64;

describe("constrained decoding, acceptance", () => {
  it("10,000 actions of an untrained tiny policy at temperature 1.0 all parse and validate", async () => {
    // The tiny preset with a longer window: the economy's and the social world's observations
    // (a household's finances and the public statistics, a feed) are prompts of 1,000-1,500 tokens.
    const m = await createFromScratch({ preset: "tiny", seed: 26, corpus: [...CORPUS, ...PAIRS.flatMap((p) => [p.prompt, p.response])], context: 2048 });
    const completer = new NativeCompleter("tiny", m.model, m.tokenizer);
    const agent = new LanguageModelAgent("policy:tiny", async () => ({ completer, tokenizer: m.tokenizer }), LmAgentOptionsSchema.parse({ temperature: 1, max_new_tokens: BUDGET }));

    // Every world's action schemas: each scenario world at several seeds, every agent; and a benchmark question.
    const turns: AgentTurn[] = [];
    const worlds = WORLD_NAMES;
    expect(worlds).toEqual(["tomi", "hitom", "fantom", "economy", "usersim", "social", "rec"]);
    for (const world of worlds) {
      for (const seed of [1, 2, 3]) {
        const sc = await (await loadScenario(world)).create(seed);
        // Four agents a world and seed: a social room's 50 users share one schema, and their feeds
        // are the long prompts that make this test slow.
        for (const name of sc.world.agents(sc.initialState).slice(0, 4)) {
          turns.push({ world, agent: name, timestep: 1, observation: sc.world.observe(sc.initialState, name), actionSchema: sc.world.actionSchema(sc.initialState, name) as z.ZodType });
        }
      }
    }
    const question = new QuestionWorld(() => 0);
    const task = { benchmark: "tomi", itemId: "q1", mode: "vanilla" as const, story: "The apple is in the box.", question: "Where is the apple?", prompt: "The apple is in the box.\nWhere is the apple?" };
    turns.push({ world: "question", agent: "respondent", timestep: 1, observation: question.observe(QuestionWorld.initial(task)), actionSchema: question.actionSchema() });
    const worldSamples = Math.round((TOTAL * 4) / 7);
    const v1Samples = TOTAL - worldSamples;

    let valid = 0;
    const failures: string[] = [];
    for (let start = 0; start < worldSamples; start += 512) {
      const batch = Array.from({ length: Math.min(512, worldSamples - start) }, (_, i) => {
        const t = turns[(start + i) % turns.length]!;
        return { ...t, timestep: 1 + Math.floor((start + i) / turns.length) };
      });
      const replies = await Promise.allSettled(batch.map((t) => agent.act(t)));
      replies.forEach((r, i) => {
        if (r.status === "fulfilled" && batch[i]!.actionSchema.safeParse(r.value.action).success) valid++;
        else failures.push(`${batch[i]!.world}: ${r.status === "rejected" ? (r.reason as Error).message : JSON.stringify(r.value.raw)}`);
      });
    }

    // /v1: three schemas, n choices a request, as the server samples them.
    const engine = new PolicyEngine(m.model, m.tokenizer, { maxBatch: 512, maxWaiting: 4096 });
    const prompt = m.tokenizer.encode(m.tokenizer.applyChatTemplate([{ role: "user", content: "Fill in the form." }], { addGenerationPrompt: true }));
    const schemas = Object.entries(V1_SCHEMAS).map(([name, zs]) => {
      const schema = z.toJSONSchema(zs);
      return { name, zs, schema, reread: z.fromJSONSchema(schema as never), grammar: responseGrammar({ type: "json_schema", json_schema: { name, schema, strict: true } }, m.tokenizer)! };
    });
    const pairs: { schema: unknown; instance: unknown }[] = [];
    const requests = [];
    for (let k = 0; k * 16 < v1Samples; k++) {
      const s = schemas[k % schemas.length]!;
      const n = Math.min(16, v1Samples - k * 16);
      const seeds = Array.from({ length: n }, (_, i) => k * 16 + i);
      requests.push(
        engine.generate({ prompt, n, seeds, maxTokens: Math.max(BUDGET, s.grammar.minBudget), temperature: 1, topP: 1, topK: 0, stop: [], logprobs: false, constraint: s.grammar }).then((choices) => {
          for (const c of choices) {
            let value: unknown;
            try {
              value = JSON.parse(c.text);
            } catch {
              failures.push(`${s.name}: not JSON: ${c.text}`);
              continue;
            }
            if (s.zs.safeParse(value).success && s.reread.safeParse(value).success) valid++;
            else failures.push(`${s.name}: ${c.text}`);
            pairs.push({ schema: s.schema, instance: value });
          }
        }),
      );
    }
    await Promise.all(requests);

    expect(failures.slice(0, 5)).toEqual([]);
    expect(valid).toBe(TOTAL);
    const outside = pythonFailures(pairs);
    if (outside) expect(outside.slice(0, 5)).toEqual([]);
  }, 600_000);
});
