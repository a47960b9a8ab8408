/**
 * The `llm` agent asks a question in its answer's own form (QuestionTask.answerForm), against the
 * project's own OpenAI-compatible endpoint (serve-policy, on loopback):
 * - the social world's reaction: the reaction's JSON schema goes as strict `response_format`
 *   (wrapped as {"answer": ...}, optional properties nullable, consts as enums), and the answer is
 *   the reaction's JSON, which the benchmark's scorer reads strictly;
 * - usersim's tagged reply: no endpoint takes a regular expression, so the pattern goes into the
 *   system message and is checked on the answer (repaired once, then kept for the judge).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Agent } from "../../worlds/core/agent.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { LlmAgent } from "../../agents/llm/llm-agent.js";
import { sharedClient, type ChatClient, type ChatRequest } from "../../agents/llm/client.js";
import { parseLlmTarget } from "../../agents/llm/options.js";
import { patternInstruction } from "../../agents/llm/prompts.js";
import { answerResponseSchema, readStructured } from "../../agents/llm/structured.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import type { PolicyServer } from "../../server/openai/app.js";
import { QuestionWorld, type Answer, type QuestionTask } from "../../worlds/question/world.js";
import { generateSocial, taskJsonSchema } from "../../worlds/social/index.js";
import { SocialBenchmark } from "../../worlds/social/benchmark.js";
import { readReply } from "../../worlds/social/scoring.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { simulationAnswer, UsersimBenchmark } from "../../worlds/usersim/benchmark.js";
import { RESPONSE_ONLY_HIERARCHY } from "../../worlds/usersim/hierarchy.js";
import { tempDir } from "../policy/fixtures.js";
import { serve } from "./fixtures.js";

let server: PolicyServer;
let social: { bench: SocialBenchmark; items: ReturnType<SocialBenchmark["load"]> };
let usersim: { bench: UsersimBenchmark; tasks: QuestionTask[] };

beforeAll(async () => {
  const dir = tempDir("sw-llm-form-");
  writeFileSync(join(dir, "s.jsonl"), generateSocial(2, 4).jsonl);
  const bench = new SocialBenchmark();
  social = { bench, items: bench.load(join(dir, "s.jsonl")) };
  writeFileSync(join(dir, "u.jsonl"), generateUsersim(3, 8).jsonl);
  const ub = new UsersimBenchmark({ hierarchy: RESPONSE_ONLY_HIERARCHY });
  usersim = { bench: ub, tasks: (await ub.load(join(dir, "u.jsonl"))).slice(0, 2).map((i) => ub.task(i, "vanilla")) };
  // An untrained model whose context holds the prompts: the server holds its replies to response_format.
  const corpus = [...social.items.slice(0, 4).map((i) => bench.task(i, "vanilla").prompt), ...usersim.tasks.map((t) => t.prompt)];
  const m = await createFromScratch({ preset: "tiny", seed: 2, corpus, context: 4096 });
  const model = tempDir("sw-llm-form-model-");
  saveCheckpoint(model, m.model, m.files);
  server = await serve({ tiny: model });
}, 120_000);
afterAll(async () => {
  await server?.close();
});

/** An agent whose requests are recorded on their way to the endpoint. */
function recorded(options: string): { agent: LlmAgent; sent: ChatRequest[] } {
  const spec = `llm:tiny@${server.baseUrl}?${options}`;
  const target = parseLlmTarget(spec, spec.slice("llm:".length));
  const inner = sharedClient(target);
  const sent: ChatRequest[] = [];
  const client = { chat: (r: ChatRequest, c?: Parameters<ChatClient["chat"]>[1]) => (sent.push(r), inner.chat(r, c)) } as unknown as ChatClient;
  return { agent: new LlmAgent(spec, target, client), sent };
}

async function ask(agent: Agent, task: QuestionTask, timestep = 0) {
  const world = new QuestionWorld(() => 0);
  const ep = await runEpisode(world, { seed: `${task.itemId}|${timestep}`, initialState: QuestionWorld.initial(task), agents: { respondent: agent as Agent<Answer> } });
  return ep.turns[0]!;
}

describe("llm agent: a question's answer form", () => {
  it("reads a reaction strictly: the {answer} wrapper, nulls for left-out properties, the closest alternative's error", () => {
    const rs = answerResponseSchema(taskJsonSchema(social.items[0]!.task));
    const p = social.items[0]!.task.parent;
    expect(rs).toMatchObject({ name: "answer", strict: true, wrapped: true, key: "answer", nullsOmitted: true });
    const sent = JSON.stringify(rs.schema);
    // What OpenAI's strict mode refuses is not sent: no const, no maxLength or pattern, no optional property.
    expect(sent).not.toMatch(/"const"|"maxLength"|"pattern"|"oneOf"|"\$schema"/);
    const variants = ((rs.schema.properties as any).answer.anyOf as any[]).map((v) => ({ action: v.properties.action.enum, target: v.properties.target.enum, required: v.required }));
    expect(variants).toEqual([
      { action: ["comment"], target: [p], required: ["action", "target", "content"] },
      { action: ["repost"], target: [p], required: ["action", "target", "content"] },
      { action: ["like"], target: [p], required: ["action", "target"] },
      { action: ["ignore"], target: [p], required: ["action", "target"] },
    ]);
    expect((rs.schema.properties as any).answer.anyOf[1].properties.content.anyOf[1]).toEqual({ type: "null" });
    expect(readStructured(`{"answer": {"action": "repost", "target": "${p}", "content": null}}`, rs)).toEqual({ ok: true, value: { action: "repost", target: p } });
    expect(readStructured(`{"answer": {"action": "comment", "target": "${p}", "content": "No."}}`, rs)).toEqual({ ok: true, value: { action: "comment", target: p, content: "No." } });
    // The schema's own rules still apply (a comment says something), and the error names the alternative that came closest.
    expect(readStructured(`{"answer": {"action": "comment", "target": "${p}", "content": " "}}`, rs)).toMatchObject({ ok: false, error: expect.stringMatching(/content/) });
    expect(readStructured(`{"answer": {"action": "like", "target": "${p}", "content": "x"}}`, rs)).toMatchObject({ ok: false, error: expect.stringMatching(/content/) });
    expect(readStructured(`{"answer": {"action": "share", "target": "${p}"}}`, rs)).toMatchObject({ ok: false, error: expect.stringMatching(/none of the 4 alternatives.*"comment".*"ignore"/) });
    expect(readStructured(`{"answer": {"action": "like", "target": "zz9"}}`, rs)).toMatchObject({ ok: false, error: expect.stringMatching(/target/) });
    // Strictly, the wrapper is required; a plain-text endpoint's reply may be the reaction itself.
    expect(readStructured(`{"action": "like", "target": "${p}"}`, rs)).toMatchObject({ ok: false, error: expect.stringMatching(/\{"answer": \.\.\.\}/) });
    expect(readStructured(`Here: {"action": "like", "target": "${p}"}`, rs, { lenient: true })).toEqual({ ok: true, value: { action: "like", target: p } });
  });

  it("sends a social question's reaction schema as strict response_format; every answer is a reaction on the asked item", async () => {
    const { agent, sent } = recorded("temperature=1&seed=3&max_tokens=120&repair=false");
    const picked = [social.items.find((i) => i.task.depth === 0)!, social.items.find((i) => i.task.depth === 1)!];
    const types = new Set<string>();
    for (const item of picked) {
      const task = social.bench.task(item, "vanilla");
      for (let t = 0; t < 4; t++) {
        const before = sent.length;
        const turn = await ask(agent, task, t);
        expect(turn.source, turn.error).toBe("agent");
        expect(sent.length).toBe(before + 1);
        expect(sent.at(-1)!.response_format).toEqual({ type: "json_schema", json_schema: { name: "answer", schema: answerResponseSchema(taskJsonSchema(item.task)).schema, strict: true } });
        const answer = (turn.action as Answer).answer;
        const read = readReply(answer, item.task);
        expect(read.strict, answer).toBe(true);
        expect(read.action!.target).toBe(item.task.parent);
        expect(JSON.parse(turn.raw!).answer).toMatchObject({ action: read.type, target: item.task.parent });
        expect((turn.info as any).answerForm).toBe("json");
        types.add(read.type);
      }
    }
    expect(types.size).toBeGreaterThan(1);
  }, 120_000);

  it("gives a usersim question's pattern as guidance and checks it: a reply outside it is repaired once, then kept for the judge", async () => {
    const { agent, sent } = recorded("temperature=1&seed=5&max_tokens=40");
    const task = usersim.tasks[0]!;
    const pattern = (task.answerForm as { pattern: string }).pattern;
    const turn = await ask(agent, task);
    const system = sent[0]!.messages[0]!;
    expect(system.role).toBe("system");
    expect(system.content).toContain(patternInstruction(pattern));
    expect(system.content).toContain(pattern);
    // The endpoint holds the reply to the free answer's JSON (it takes no pattern); the untrained model's text is not a tagged reply.
    expect((sent[0]!.response_format as any).json_schema.schema.properties.answer).not.toHaveProperty("pattern");
    const info = turn.info as any;
    expect(info.calls.map((c: { purpose: string }) => c.purpose)).toEqual(["answer", "answer:repair"]);
    expect(info.rejected[0].error).toMatch(/does not match the required pattern/);
    expect(sent[1]!.messages.at(-1)!.content).toMatch(/does not match the required pattern/);
    // Kept all the same: the benchmark's judge scores what the model wrote.
    expect(turn.source).toBe("agent");
    expect((turn.action as Answer).answer).toBe(JSON.parse(turn.raw!).answer);
    expect(info.answerForm).toBe("pattern");
  }, 120_000);

  it("takes a usersim answer of the pattern at once (a plain-text endpoint's bare reply too)", async () => {
    const task = usersim.tasks[1]!;
    const truth = simulationAnswer(task);
    const replies = [JSON.stringify({ answer: truth }), truth];
    for (const [format, reply] of [["json_schema", replies[0]!], ["text", replies[1]!]] as const) {
      const spec = `llm:canned@http://127.0.0.1:9/v1?response_format=${format}`;
      const target = parseLlmTarget(spec, spec.slice("llm:".length));
      const canned = { chat: async () => ({ completion: { choices: [{ message: { content: reply }, finish_reason: "stop" }] }, text: reply, attempts: 1, latencyMs: 0, failures: [] }) } as unknown as ChatClient;
      const turn = await ask(new LlmAgent(spec, target, canned), task);
      expect(turn.source).toBe("agent");
      expect((turn.action as Answer).answer.trim()).toBe(truth.trim());
      expect((turn.info as any).calls.map((c: { purpose: string }) => c.purpose)).toEqual(["answer"]);
    }
  });
});
