/**
 * The `llm` agent against a real server of the project (serve-policy with policies trained here):
 * structured output read strictly with one repair, benchmark runs, timeouts, retries with
 * backoff and Retry-After, the concurrency limit, and the fallback when the endpoint fails.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Agent } from "../../worlds/core/agent.js";
import { Backoff, retryAfterMs } from "../../agents/llm/backoff.js";
import { Limiter } from "../../agents/llm/limiter.js";
import { llmAgent } from "../../agents/llm/llm-agent.js";
import { parseLlmTarget } from "../../agents/llm/options.js";
import { contextPrompt, simulationAnswerPrompt, worldRules } from "../../agents/llm/prompts.js";
import { readStructured, responseSchema } from "../../agents/llm/structured.js";
import { SocializedContextSchema } from "../../worlds/core/socialized-context.js";
import { checkAgentSpec, loadAgent } from "../../agents/registry.js";
import { main } from "../../cli/main.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { QuestionWorld, AnswerSchema, type Answer, type QuestionTask } from "../../worlds/question/world.js";
import { TomiActionSchema } from "../../worlds/tomi/world.js";
import { HouseholdDecisionSchema } from "../../worlds/economy/action.js";
import type { PolicyServer } from "../../server/openai/app.js";
import { captureOutput } from "../capture.js";
import { tempDir } from "../policy/fixtures.js";
import { serve, slowPolicy } from "./fixtures.js";
import { FIRST_REPLY, PROSE_REPLY, REPAIRED_REPLY, vanillaPolicy, type VanillaPolicy } from "./vanilla-policy.js";

const io = captureOutput();
let v: VanillaPolicy;
let server: PolicyServer;
let slowDir: string;

beforeAll(async () => {
  v = await vanillaPolicy();
  slowDir = await slowPolicy();
  // The agent's repair path needs replies that break the format: the server only checks it, as
  // an endpoint without constrained decoding does.
  server = await serve({ policy: v.dir }, { enforceFormat: false });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

/** One question through the game loop, as a benchmark asks it; returns the respondent's turn. */
async function ask(agent: Agent, task: QuestionTask, turnTimeoutMs?: number) {
  const world = new QuestionWorld(() => 0);
  const ep = await runEpisode(world, {
    seed: task.itemId,
    initialState: QuestionWorld.initial(task),
    agents: { respondent: agent as Agent<Answer> },
    ...(turnTimeoutMs !== undefined ? { turnTimeoutMs } : {}),
  });
  return ep.turns[0]!;
}

const llm = (spec: string) => llmAgent(spec, spec.slice("llm:".length));

describe("llm agent: structured output", () => {
  it("derives the reply's JSON schema from the world's zod schema", () => {
    const answer = responseSchema("action", AnswerSchema);
    expect(answer).toMatchObject({ wrapped: false, strict: true });
    // maxLength is left out of what is sent (strict endpoints refuse it); zod still applies it.
    expect(answer.schema).toEqual({ type: "object", properties: { answer: { type: "string", description: "The answer to the question." } }, required: ["answer"], additionalProperties: false });
    const tomi = responseSchema("action", TomiActionSchema);
    expect(tomi.wrapped).toBe(true);
    expect(tomi.strict).toBe(false); // exit's room is optional
    expect((tomi.schema.properties as any).action.anyOf).toHaveLength(4);
    expect(readStructured('{"action": {"type": "move", "object": "apple", "container": "box"}}', tomi)).toEqual({ ok: true, value: { type: "move", object: "apple", container: "box" } });
    expect(readStructured('{"action": {"type": "fly"}}', tomi)).toMatchObject({ ok: false });
    // Numeric bounds are not sent either; zod applies them, its error naming the field and the bound.
    const household = responseSchema("action", HouseholdDecisionSchema);
    expect(JSON.stringify(household.schema)).not.toMatch(/minimum|maximum/i);
    expect(readStructured('{"work": 0.5, "consumption": 0.25}', household)).toEqual({ ok: true, value: { work: 0.5, consumption: 0.25 } });
    expect(readStructured('{"work": 1.5, "consumption": 0.25}', household)).toEqual({ ok: false, error: expect.stringMatching(/^the reply does not match the schema: .*expected number to be <=1.*at work$/) });
    expect(readStructured('{"work": 0.5, "consumption": -1}', household)).toEqual({ ok: false, error: expect.stringMatching(/expected number to be >=0.*at consumption$/) });
  });

  it("sends a tuple as an array of its positions' schemas (never `items: false` alone, which allows only []), and zod checks each position", () => {
    const pair = responseSchema("action", z.object({ move: z.tuple([z.string(), z.number()]) }));
    expect((pair.schema.properties as any).move).toEqual({ type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } });
    const rest = responseSchema("action", z.object({ path: z.tuple([z.string()], z.boolean()) }));
    expect((rest.schema.properties as any).path).toEqual({ type: "array", items: { anyOf: [{ type: "string" }, { type: "boolean" }] } });
    expect(readStructured('{"move": ["kitchen", 2]}', pair)).toEqual({ ok: true, value: { move: ["kitchen", 2] } });
    expect(readStructured('{"move": [2, "kitchen"]}', pair)).toMatchObject({ ok: false, error: expect.stringMatching(/move/) });
    expect(readStructured('{"move": ["kitchen", 2, 3]}', pair)).toMatchObject({ ok: false });
  });

  it("reads replies strictly: one JSON document (a lone fenced block too), no unknown keys", () => {
    const rs = responseSchema("action", AnswerSchema);
    expect(readStructured(' {"answer": "box"}\n', rs)).toEqual({ ok: true, value: { answer: "box" } });
    expect(readStructured('```json\n{"answer": "box"}\n```', rs)).toEqual({ ok: true, value: { answer: "box" } });
    expect(readStructured('Sure! {"answer": "box"}', rs)).toMatchObject({ ok: false, error: expect.stringMatching(/not valid JSON/) });
    expect(readStructured('Sure! {"answer": "box"}', rs, { lenient: true })).toEqual({ ok: true, value: { answer: "box" } });
    expect(readStructured('{"answer": "box", "why": "x"}', rs)).toMatchObject({ ok: false, error: expect.stringMatching(/does not match the schema.*why/) });
    expect(readStructured('{"answer": 3}', rs)).toMatchObject({ ok: false, error: expect.stringMatching(/answer/) });
  });

  it("answers a benchmark question in JSON through the game loop, logging prompt, reply and usage", async () => {
    const turn = await ask(llm(`llm:policy@${server.baseUrl}`), v.q1);
    expect(turn.source).toBe("agent");
    expect(turn.action).toEqual({ answer: "box" });
    expect(turn.prompt).toBe(v.q1.prompt);
    expect(turn.raw).toBe(FIRST_REPLY);
    const info = turn.info as any;
    expect(info).toMatchObject({ model: "policy", endpoint: server.baseUrl, calls: [{ purpose: "answer", attempts: 1, finishReason: "stop" }] });
    expect(info.usage.completion_tokens).toBeGreaterThan(0);
    expect(info.rejected).toBeUndefined();
  });

  it("repairs an unreadable reply once: the model sees its reply and the reason, and answers again", async () => {
    const turn = await ask(llm(`llm:policy@${server.baseUrl}`), v.q2);
    expect(turn.source).toBe("agent");
    expect(turn.action).toEqual({ answer: "crate" });
    expect(turn.raw).toBe(REPAIRED_REPLY);
    const info = turn.info as any;
    expect(info.calls.map((c: { purpose: string }) => c.purpose)).toEqual(["answer", "answer:repair"]);
    expect(info.rejected).toEqual([{ purpose: "answer", reply: PROSE_REPLY, error: expect.stringMatching(/^the reply is not valid JSON/) }]);

    // Without the repair the turn fails: the loop logs why and its fallback answers (nothing).
    const strict = await ask(llm(`llm:policy@${server.baseUrl}?repair=false`), v.q2);
    expect(strict.source).toBe("fallback");
    expect(strict.action).toEqual({ answer: "" });
    expect(strict.error).toMatch(/^agent error: the answer could not be read \(repair is off\): the reply is not valid JSON/);
    // What it was asked and what it said are logged with the failed turn all the same.
    expect(strict.prompt).toBe(v.q2.prompt);
    expect(strict.raw).toBe(PROSE_REPLY);
    const failed = strict.info as any;
    expect(failed).toMatchObject({ model: "policy", endpoint: server.baseUrl, calls: [{ purpose: "answer", attempts: 1 }] });
    expect(failed.rejected).toEqual([{ purpose: "answer", reply: PROSE_REPLY, error: expect.stringMatching(/^the reply is not valid JSON/) }]);
    expect(failed.usage.completion_tokens).toBeGreaterThan(0);
  });

  it("needs no repair from a server that enforces the format: the first reply is read", async () => {
    const enforcing = await serve({ policy: v.dir });
    try {
      const turn = await ask(llm(`llm:policy@${enforcing.baseUrl}?repair=false`), v.q2);
      expect(turn.source).toBe("agent");
      expect(typeof (turn.action as Answer).answer).toBe("string");
      expect((turn.info as any).calls.map((c: { purpose: string }) => c.purpose)).toEqual(["answer"]);
    } finally {
      await enforcing.close();
    }
  });

  it("runs a benchmark from the command line and logs every turn", async () => {
    const store = join(tempDir(), "store");
    const out = join(tempDir(), "r.json");
    const code = await main(["bench", "tomi", "--data", v.story.file, "--agent", `llm:policy@${server.baseUrl}?temperature=0&max_tokens=32`, "--store", store, "--json", out, "--quiet"]);
    expect(code, io.err).toBe(0);
    const report = JSON.parse(readFileSync(out, "utf8"));
    expect(report).toMatchObject({ total: 2, correct: 2, mode: "vanilla" });
    expect(report.errors?.count ?? 0).toBe(0);
    const [run] = readdirSync(join(store, "runs"));
    const log = readEpisodeLog<any>(join(store, "runs", run!, "episodes.jsonl"));
    const turns = log.records.map((r) => r.turns[0]);
    expect(turns.map((t) => t.raw)).toEqual([FIRST_REPLY, REPAIRED_REPLY]);
    expect(turns[1].info.rejected[0].reply).toBe(PROSE_REPLY);
  });
});

describe("llm agent: failures, retries and limits", () => {
  it("retries a refused connection with backoff until the server is up", async () => {
    const port = await freePort();
    // The server listens only once its model's worker thread is up (about a second from sources, more
    // on a loaded machine): retries for several seconds, not the 1.4 s that 8 of 80-200 ms gave.
    const agent = llm(`llm:policy@http://127.0.0.1:${port}/v1?retries=20&backoff=100&backoff_max=400`);
    const late = new Promise<PolicyServer>((resolve) => setTimeout(() => resolve(serve({ policy: v.dir }, { port })), 300));
    const started = Date.now();
    const turn = await ask(agent, v.q1);
    const s = await late;
    await s.close();
    expect(turn.action).toEqual({ answer: "box" });
    const call = (turn.info as any).calls[0];
    expect(call.attempts).toBeGreaterThan(1);
    expect(call.failures).toHaveLength(call.attempts - 1);
    for (const f of call.failures) expect(f).toBe("network error: ECONNREFUSED");
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it("when the endpoint stays down, the episode goes on with the fallback and the failure is logged with it", async () => {
    const port = await freePort();
    const store = join(tempDir(), "store");
    const out = join(tempDir(), "r.json");
    const code = await main(["bench", "tomi", "--data", v.story.file, "--agent", `llm:policy@http://127.0.0.1:${port}/v1?retries=2&backoff=10`, "--store", store, "--json", out, "--quiet"]);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(out, "utf8"));
    expect(report).toMatchObject({ total: 2, correct: 0 });
    expect(report.errors.count).toBe(2);
    const [run] = readdirSync(join(store, "runs"));
    const log = readEpisodeLog<any>(join(store, "runs", run!, "episodes.jsonl"));
    expect(log.records).toHaveLength(2);
    for (const r of log.records) {
      expect(r.turns[0]).toMatchObject({ source: "fallback", action: { answer: "" } });
      expect(r.turns[0].error).toBe(
        `agent error: answer: http://127.0.0.1:${port}/v1/chat/completions: network error: ECONNREFUSED (3 attempts: network error: ECONNREFUSED; network error: ECONNREFUSED; network error: ECONNREFUSED)`,
      );
      expect(r.result.error).toBe(r.turns[0].error);
      // The prompt it could not send and the failed call are in the log too.
      expect(r.turns[0].prompt).toContain(r.result.question);
      expect(r.turns[0].info).toMatchObject({ model: "policy", calls: [], usage: { prompt_tokens: 0, completion_tokens: 0 } });
    }
  });

  it("times out a request that takes too long, retries it, and the server stops the abandoned generation", async () => {
    const slow = await serve({ slow: slowDir });
    try {
      const agent = llm(`llm:slow@${slow.baseUrl}?timeout=150&retries=1&backoff=10&max_tokens=600&response_format=text`);
      const turn = await ask(agent, v.q1);
      expect(turn.source).toBe("fallback");
      expect(turn.error).toBe(`agent error: answer: ${slow.baseUrl}/chat/completions: timed out after 150 ms (2 attempts: timed out after 150 ms; timed out after 150 ms)`);
      await until(() => slow.service.health()[0]!.stats!.cancelled === 2);
      expect(slow.service.health()[0]!.stats!.completed).toBe(0);

      // The turn's deadline (the loop's) reaches the request too: it is cancelled, not left running.
      const patient = llm(`llm:slow@${slow.baseUrl}?timeout=30000&retries=3&max_tokens=600&response_format=text`);
      const late = await ask(patient, v.q1, 200);
      expect(late.error).toBe("timeout after 200 ms");
      await until(() => slow.service.health()[0]!.stats!.cancelled === 3 && slow.service.health()[0]!.stats!.running === 0);
    } finally {
      await slow.close();
    }
  });

  it("waits as long as a busy server's Retry-After asks, then gets its answer", async () => {
    const slow = await serve({ slow: slowDir }, { maxWaiting: 1 });
    try {
      const u = `${slow.baseUrl}/chat/completions`;
      const body = (t: number) => JSON.stringify({ model: "slow", messages: [{ role: "user", content: "Avery entered the garage." }], max_tokens: 150, temperature: t });
      const busy = [fetch(u, { method: "POST", headers: { "content-type": "application/json" }, body: body(0) })];
      await until(() => slow.service.health()[0]!.stats!.running === 1);
      busy.push(fetch(u, { method: "POST", headers: { "content-type": "application/json" }, body: body(0.5) }));
      await until(() => slow.service.health()[0]!.stats!.waiting === 1);
      const agent = llm(`llm:slow@${slow.baseUrl}?retries=3&backoff=1&response_format=text&max_tokens=4&timeout=20000`);
      const started = Date.now();
      const turn = await ask(agent, v.q1);
      await Promise.all(busy);
      expect(turn.source).toBe("agent");
      const call = (turn.info as any).calls[0];
      expect(call.failures[0]).toMatch(/^HTTP 429: the server is busy/);
      // backoff=1 ms: only the server's hint (about a second) explains the wait.
      expect(Date.now() - started).toBeGreaterThanOrEqual(500);
      expect(slow.service.health()[0]!.stats!.rejected).toBeGreaterThanOrEqual(1);
    } finally {
      await slow.close();
    }
  });

  it("keeps at most `concurrency` requests in flight", async () => {
    // The slow policy takes long enough per request for the server to see who is in flight.
    const run = async (concurrency: number) => {
      const s = await serve({ slow: slowDir });
      try {
        const agent = llm(`llm:slow@${s.baseUrl}?concurrency=${concurrency}&response_format=text&max_tokens=40`);
        const turns = await Promise.all(Array.from({ length: 6 }, (_, i) => ask(agent, i % 2 ? v.q2 : v.q1)));
        expect(turns.every((t) => t.source === "agent")).toBe(true);
        return { client: agent.client.limiter.peak, server: s.service.health()[0]!.stats!.peakRunning };
      } finally {
        await s.close();
      }
    };
    const limited = await run(2);
    expect(limited.client).toBe(2);
    expect(limited.server).toBeLessThanOrEqual(2);
    const open = await run(64);
    expect(open.client).toBe(6);
    expect(open.server).toBeGreaterThan(2);
  });
});

describe("llm agent: spec and building blocks", () => {
  it("reads MODEL@BASE_URL?options, with the key from the environment", async () => {
    const env = { OPENAI_API_KEY: "sk-a", TOGETHER_API_KEY: "tg-b" };
    expect(parseLlmTarget("s", "qwen2.5:7b@http://localhost:11434/v1/?temperature=0.7&max_tokens=64", env)).toMatchObject({
      model: "qwen2.5:7b",
      baseUrl: "http://localhost:11434/v1",
      apiKey: "sk-a",
      options: { temperature: 0.7, max_tokens: 64, retries: 3, concurrency: 8, response_format: "json_schema", repair: true },
    });
    expect(parseLlmTarget("s", "meta-llama/Llama-3-8b@https://api.together.xyz/v1?key_env=TOGETHER_API_KEY", env).apiKey).toBe("tg-b");
    expect(parseLlmTarget("s", "gpt-4o-mini?seed=3", {})).toMatchObject({ model: "gpt-4o-mini", baseUrl: "https://api.openai.com/v1", options: { seed: 3 } });
    expect(parseLlmTarget("s", "m", { SOCIALWORLD_LLM_BASE_URL: "http://h:1/v1" }).baseUrl).toBe("http://h:1/v1");
    expect(() => parseLlmTarget("llm:x", "x@http://h/v1?colour=red", {})).toThrow(/llm:x: colour: unknown option/);
    expect(() => parseLlmTarget("llm:x", "x@http://h/v1?temperature=9", {})).toThrow(/temperature/);
    expect(() => parseLlmTarget("llm:x", "x@ftp://h/v1", {})).toThrow(/http or https/);
    expect(() => parseLlmTarget("llm:x", "x@http://user:pw@h/v1", {})).toThrow(/no credentials in the URL/);
    expect(() => parseLlmTarget("llm:x", "x@http://h/v1?key_env=NOPE", {})).toThrow(/\$NOPE is not set/);
    expect(() => parseLlmTarget("llm:", "", {})).toThrow(/needs a model name/);
    expect(() => checkAgentSpec("llm:m@nowhere")).toThrow(/is not a URL/);
    await expect(loadAgent("llm:m@nowhere")).rejects.toThrow(/is not a URL/);
  });

  it("backs off exponentially with seeded jitter, and reads Retry-After", () => {
    const a = new Backoff({ initialMs: 100, maxMs: 1000 }, 7);
    const b = new Backoff({ initialMs: 100, maxMs: 1000 }, 7);
    const delays = [1, 2, 3, 4, 5, 6].map((r) => a.delay(r));
    expect([1, 2, 3, 4, 5, 6].map((r) => b.delay(r))).toEqual(delays);
    [100, 200, 400, 800, 1000, 1000].forEach((full, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(full / 2);
      expect(delays[i]).toBeLessThanOrEqual(full);
    });
    expect(retryAfterMs(new Headers({ "retry-after-ms": "250", "retry-after": "9" }))).toBe(250);
    expect(retryAfterMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(new Headers({ "retry-after": new Date(10_000).toUTCString() }), 4_000)).toBe(6000);
    expect(retryAfterMs(new Headers({}))).toBeUndefined();
  });

  it("limits holders, in order, and lets a waiter whose deadline passed leave", async () => {
    const lim = new Limiter(1);
    const release = await lim.acquire();
    const gone = new AbortController();
    const order: string[] = [];
    const first = lim.acquire(gone.signal).then(
      () => order.push("aborted one got in"),
      () => order.push("aborted one left"),
    );
    const second = lim.acquire().then((r) => {
      order.push("second");
      r();
    });
    gone.abort();
    await first;
    expect(lim.waiting).toBe(1);
    release();
    await second;
    expect(order).toEqual(["aborted one left", "second"]);
    expect(lim.peak).toBe(1);
    expect(lim.running).toBe(0);
  });

  it("builds the simulation prompts from the prompt files, with each benchmark's rules", () => {
    const task = { ...v.q1, mode: "simulation" as const };
    const tomi = contextPrompt(task, responseSchema("socialized_context", SocializedContextSchema).schema);
    expect(tomi).toContain(worldRules("tomi"));
    expect(tomi).toContain("Story:\n1 Ella entered the garage.");
    expect(tomi).toContain('"agents_names":{"type":"array"');
    for (const b of ["hitom", "fantom"]) expect(worldRules(b)).toMatch(/^- /);
    expect(worldRules("no-such-benchmark")).toBe("");
    expect(contextPrompt({ ...task, benchmark: "hitom" }, {})).toContain("exited the object's room later");
    const answer = simulationAnswerPrompt({ ...task, choices: ["A. box", "B. crate"] }, { agents_names: ["Ella"], socialized_context: [] });
    expect(answer).toContain('{"agents_names":["Ella"],"socialized_context":[]}');
    expect(answer).toContain("Question: Where will Ella look for the apple?\nChoices: A. box, B. crate\n");
  });

  it("the registry lists and builds it", async () => {
    expect((await loadAgent(`llm:policy@${server.baseUrl}`)).id).toBe(`llm:policy@${server.baseUrl}`);
    const schema = z.object({ answer: z.string() });
    expect(responseSchema("action", schema).strict).toBe(true);
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
