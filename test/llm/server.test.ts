/**
 * The OpenAI-compatible API of our policies (`serve-policy`, and /v1 in the main server): the
 * chat-completions wire format, streaming as server-sent events, sampling settings, response
 * formats enforced while sampling (or only checked and reported), errors in OpenAI's shape,
 * batching, back-pressure and cancellation. Replies are compared with the native engine's own generation.
 */
import { mkdirSync, cpSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCheckpoint } from "../../models/checkpoint.js";
import { NativeCompleter } from "../../models/generate.js";
import { formatInstruction } from "../../agents/llm/prompts.js";
import { main } from "../../cli/main.js";
import { startServer } from "../../server/main.js";
import { heldBack } from "../../server/openai/engine.js";
import { parseModelArg } from "../../server/openai/models.js";
import type { PolicyServer } from "../../server/openai/app.js";
import { captureOutput } from "../capture.js";
import { tempDir, tinyCheckpoint } from "../policy/fixtures.js";
import { ANSWER, post, serve, slowPolicy, sseEvents } from "./fixtures.js";
import { FIRST_REPLY, PROSE_REPLY, vanillaPolicy, type VanillaPolicy } from "./vanilla-policy.js";

let v: VanillaPolicy;
let tiny: string;
let server: PolicyServer;
let url: string;
const io = captureOutput();

beforeAll(async () => {
  v = await vanillaPolicy();
  tiny = (await tinyCheckpoint(11)).dir;
  server = await serve({ policy: v.dir, tiny });
  url = `${server.baseUrl}/chat/completions`;
}, 60_000);
afterAll(async () => {
  await server?.close();
});

const system = () => ({ role: "system", content: formatInstruction(ANSWER.schema) });
const jsonSchema = { type: "json_schema", json_schema: { name: "action", schema: ANSWER.schema, strict: true } };

describe("serve-policy: chat completions", () => {
  it("lists its models", async () => {
    const res = await fetch(`${server.baseUrl}/models`);
    const body = (await res.json()) as any;
    expect(body.object).toBe("list");
    expect(body.data.map((m: { id: string }) => m.id)).toEqual(["policy", "tiny"]);
    expect(body.data[0]).toMatchObject({ object: "model", owned_by: "socialworld", max_model_len: 512 });
    expect(((await (await fetch(`${server.baseUrl}/models/tiny`)).json()) as any).id).toBe("tiny");
    const missing = await fetch(`${server.baseUrl}/models/nope`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error).toMatchObject({ code: "model_not_found", param: "model" });
  });

  it("answers in the OpenAI format, with usage, and checks the JSON schema it was given", async () => {
    const good = await post(url, { model: "policy", temperature: 0, messages: [system(), { role: "user", content: v.q1.prompt }], response_format: jsonSchema });
    expect(good.status).toBe(200);
    expect(good.json).toMatchObject({ object: "chat.completion", model: "policy", choices: [{ index: 0, message: { role: "assistant", content: FIRST_REPLY }, finish_reason: "stop", format_check: { valid: true } }] });
    expect(good.json.id).toMatch(/^chatcmpl-/);
    const tok = loadCheckpoint(v.dir).tokenizer;
    const promptIds = tok.encode(tok.applyChatTemplate([system() as never, { role: "user", content: v.q1.prompt }], { addGenerationPrompt: true }));
    // Completion tokens: the reply's tokens and the end-of-turn token.
    expect(good.json.usage).toEqual({ prompt_tokens: promptIds.length, completion_tokens: tok.encode(FIRST_REPLY).length + 1, total_tokens: promptIds.length + tok.encode(FIRST_REPLY).length + 1 });

    // The policy answers q2 in prose; held to the schema while sampling, it writes JSON that matches.
    const prose = await post(url, { model: "policy", temperature: 0, messages: [system(), { role: "user", content: v.q2.prompt }], response_format: jsonSchema });
    expect(prose.json.choices[0].format_check).toEqual({ valid: true });
    expect(Object.keys(JSON.parse(prose.json.choices[0].message.content))).toEqual(["answer"]);
    const wrongShape = { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { reply: { type: "string", maxLength: 12 } }, required: ["reply"], additionalProperties: false } } };
    const reshaped = await post(url, { model: "policy", temperature: 0, messages: [system(), { role: "user", content: v.q1.prompt }], response_format: wrongShape });
    expect(reshaped.json.choices[0].format_check).toEqual({ valid: true });
    expect(JSON.parse(reshaped.json.choices[0].message.content).reply.length).toBeLessThanOrEqual(12);
    const anyObject = await post(url, { model: "policy", temperature: 1, seed: 4, n: 4, messages: [system(), { role: "user", content: v.q2.prompt }], response_format: { type: "json_object" } });
    expect(anyObject.status, anyObject.text).toBe(200);
    for (const c of anyObject.json.choices) expect(c.format_check).toEqual({ valid: true });
    // What cannot be enforced is refused up front, naming the part of the schema at fault.
    const notSupported = { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { a: { type: "string", format: "uri" } } } } };
    const refused = await post(url, { model: "policy", messages: [{ role: "user", content: "hi" }], response_format: notSupported });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ param: "response_format.json_schema.schema/properties/a/format", message: expect.stringMatching(/the format "uri" is not supported/) });
    const tooFew = await post(url, { model: "policy", max_tokens: 2, messages: [{ role: "user", content: "hi" }], response_format: jsonSchema });
    expect(tooFew.status).toBe(400);
    expect(tooFew.json.error).toMatchObject({ param: "max_tokens", message: expect.stringMatching(/too few for a reply that matches response_format/) });
  });

  it("with --no-enforce-format, only checks replies against the format after sampling", async () => {
    const checking = await serve({ policy: v.dir }, { enforceFormat: false });
    try {
      const at = `${checking.baseUrl}/chat/completions`;
      const prose = await post(at, { model: "policy", temperature: 0, messages: [system(), { role: "user", content: v.q2.prompt }], response_format: jsonSchema });
      expect(prose.json.choices[0].message.content).toBe(PROSE_REPLY);
      expect(prose.json.choices[0].format_check).toEqual({ valid: false, error: "the output is not valid JSON" });
      const wrongShape = { type: "json_schema", json_schema: { name: "x", schema: { type: "object", properties: { reply: { type: "string" } }, required: ["reply"], additionalProperties: false } } };
      const mismatch = await post(at, { model: "policy", temperature: 0, messages: [system(), { role: "user", content: v.q1.prompt }], response_format: wrongShape });
      expect(mismatch.json.choices[0].message.content).toBe(FIRST_REPLY);
      expect(mismatch.json.choices[0].format_check.valid).toBe(false);
      expect(mismatch.json.choices[0].format_check.error).toMatch(/does not match the schema.*reply/);
    } finally {
      await checking.close();
    }
  });

  it("samples as the native engine does: same prompt, seed and settings, same tokens and log-probabilities", async () => {
    const ck = loadCheckpoint(tiny);
    const messages = [{ role: "user" as const, content: "Where is the spinach?" }];
    const prompt = ck.tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true });
    const [ref] = await new NativeCompleter("ref", ck.model, ck.tokenizer).complete([prompt], { maxNewTokens: 24, temperature: 0.9, topK: 40, topP: 0.95 }, [1234]);
    const r = await post(url, { model: "tiny", messages, max_tokens: 24, temperature: 0.9, top_k: 40, top_p: 0.95, seed: 1234, logprobs: true });
    const choice = r.json.choices[0];
    expect(choice.message.content).toBe(ref!.text);
    expect(choice.finish_reason).toBe(ref!.finishReason === "length" ? "length" : "stop");
    const content = ref!.finishReason === "stop_token" ? ref!.tokens.length - 1 : ref!.tokens.length;
    expect(choice.logprobs.content.map((l: { logprob: number }) => l.logprob)).toEqual(Array.from(ref!.logprobs.slice(0, content), (x) => Math.fround(x)));
    expect(choice.logprobs.content.map((l: { token: string }) => l.token).join("")).toBe(ref!.text);
    expect(r.json.usage.completion_tokens).toBe(ref!.tokens.length);

    // n choices are the completions of seeds seed, seed+1, ...
    const two = await post(url, { model: "tiny", messages, max_tokens: 12, temperature: 1, seed: 77, n: 2 });
    const a = await post(url, { model: "tiny", messages, max_tokens: 12, temperature: 1, seed: 77 });
    const b = await post(url, { model: "tiny", messages, max_tokens: 12, temperature: 1, seed: 78 });
    expect(two.json.choices.map((c: { message: { content: string } }) => c.message.content)).toEqual([a.json.choices[0].message.content, b.json.choices[0].message.content]);
    expect(two.json.usage.prompt_tokens).toBe(a.json.usage.prompt_tokens);
  });

  it("streams the same text as server-sent events, ending with [DONE]", async () => {
    const body = { model: "tiny", messages: [{ role: "user", content: "What does Liam like?" }], max_tokens: 40, temperature: 0.8, seed: 5, logprobs: true };
    const whole = await post(url, body);
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...body, stream: true, stream_options: { include_usage: true } }) });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = sseEvents(await res.text()) as any[];
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1);
    for (const c of chunks) expect(c).toMatchObject({ object: "chat.completion.chunk", model: "tiny", id: chunks[0].id });
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    const deltas = chunks.filter((c) => c.choices.length && c.choices[0].delta.content);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((c) => c.choices[0].delta.content).join("")).toBe(whole.json.choices[0].message.content);
    const streamedLogprobs = chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? []);
    expect(streamedLogprobs).toEqual(whole.json.choices[0].logprobs.content);
    const last = chunks.filter((c) => c.choices.length).at(-1);
    expect(last.choices[0]).toMatchObject({ delta: {}, finish_reason: whole.json.choices[0].finish_reason });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: whole.json.usage });
    for (const c of chunks.slice(0, -1)) expect(c.usage).toBeNull();
  });

  it("ends at stop strings, and never streams a stop string's start", async () => {
    const messages = [{ role: "system", content: formatInstruction(ANSWER.schema) }, { role: "user", content: v.q1.prompt }];
    const cut = await post(url, { model: "policy", temperature: 0, messages, stop: ['"box'] });
    expect(cut.json.choices[0]).toMatchObject({ message: { content: '{"answer": ' }, finish_reason: "stop" });
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "policy", temperature: 0, messages, stop: ['"box'], stream: true }) });
    const text = (sseEvents(await res.text()) as any[])
      .slice(0, -1)
      .map((c) => c.choices[0]?.delta?.content ?? "")
      .join("");
    expect(text).toBe('{"answer": ');
    expect(heldBack('{"answer": "bo', ['"box'])).toBe('{"answer": ');
    expect(heldBack("caf\ufffd", [])).toBe("caf");
    const short = await post(url, { model: "policy", temperature: 0, messages, max_tokens: 3 });
    expect(short.json.choices[0].finish_reason).toBe("length");
    expect(short.json.usage.completion_tokens).toBe(3);
  });

  it("refuses bad requests in OpenAI's error shape, naming the field", async () => {
    const user = [{ role: "user", content: "hi" }];
    const cases: [unknown, number, RegExp, string | null][] = [
      [{ messages: user }, 400, /model: is required/, "model"],
      [{ model: "tiny", messages: [] }, 400, /messages: needs at least one message/, "messages"],
      [{ model: "tiny", messages: user, temperature: 3 }, 400, /temperature/, "temperature"],
      [{ model: "tiny", messages: user, tools: [{ type: "function" }] }, 400, /tools are not supported/, "tools"],
      [{ model: "tiny", messages: user, top_logprobs: 5 }, 400, /top_logprobs is not supported/, "top_logprobs"],
      [{ model: "tiny", messages: [{ role: "tool", content: "x" }] }, 400, /tool messages are not supported/, "messages[0].role"],
      [{ model: "tiny", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] }, 400, /only text parts/, "messages[0].content"],
      [{ model: "gpt-9", messages: user }, 404, /`gpt-9` does not exist/, "model"],
      [{ model: "tiny", messages: user, max_tokens: 100_000 }, 400, /maximum context length is 512 tokens/, "max_tokens"],
      [{ model: "tiny", messages: [{ role: "user", content: "word ".repeat(600) }] }, 400, /maximum context length is 512 tokens/, "messages"],
      [{ model: "tiny", messages: user, response_format: { type: "json_schema", json_schema: { name: "bad name!" } } }, 400, /response_format/, null],
      ["{not json", 400, /not valid JSON/, null],
    ];
    for (const [body, status, message, param] of cases) {
      const r = await post(url, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.json.error.message).toMatch(message);
      expect(r.json.error.type).toBe(status === 404 ? "invalid_request_error" : "invalid_request_error");
      if (param) expect(r.json.error.param).toBe(param);
    }
    const content = await post(url, { model: "tiny", messages: [{ role: "user", content: [{ type: "text", text: "Where is " }, { type: "text", text: "the spinach?" }] }], max_tokens: 4, temperature: 0 });
    const plain = await post(url, { model: "tiny", messages: [{ role: "user", content: "Where is the spinach?" }], max_tokens: 4, temperature: 0 });
    expect(content.json.choices[0].message.content).toBe(plain.json.choices[0].message.content);
    const noType = await fetch(url, { method: "POST", body: JSON.stringify({ model: "tiny", messages: user }) });
    expect(noType.status).toBe(400);
    expect(((await noType.json()) as any).error.message).toMatch(/must be a JSON object \(Content-Type: application\/json\)/);
    const unknown = await fetch(`${server.baseUrl}/embeddings`, { method: "POST" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as any).error.code).toBe("unknown_url");
  });

  it("batches concurrent requests with the same settings, and each still gets its own reply", async () => {
    const before = server.service.health().find((m) => m.id === "policy")!.stats!;
    const asks = Array.from({ length: 6 }, (_, i) => post(url, { model: "policy", temperature: 0, messages: [system(), { role: "user", content: (i % 2 ? v.q2 : v.q1).prompt }] }));
    const replies = await Promise.all(asks);
    expect(replies.map((r) => r.json.choices[0].message.content)).toEqual([FIRST_REPLY, PROSE_REPLY, FIRST_REPLY, PROSE_REPLY, FIRST_REPLY, PROSE_REPLY]);
    const after = server.service.health().find((m) => m.id === "policy")!.stats!;
    expect(after.completed - before.completed).toBe(6);
    expect(after.batches - before.batches).toBeLessThan(6);
    expect(after.peakRunning).toBeGreaterThan(1);
  });
});

describe("serve-policy: load, keys and hang-ups", () => {
  it("refuses work past --max-waiting with 429 and a Retry-After, and stops generating for clients that hang up", async () => {
    const slow = await serve({ slow: await slowPolicy() }, { maxWaiting: 1 });
    const u = `${slow.baseUrl}/chat/completions`;
    const long = { model: "slow", messages: [{ role: "user", content: "Ella entered the garage." }], max_tokens: 900, temperature: 0 };
    try {
      const running = new AbortController();
      const waiting = new AbortController();
      const r1 = fetch(u, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(long), signal: running.signal }).catch(() => undefined);
      await until(() => slow.service.health()[0]!.stats!.running === 1);
      const r2 = fetch(u, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...long, temperature: 0.5 }), signal: waiting.signal }).catch(() => undefined);
      await until(() => slow.service.health()[0]!.stats!.waiting === 1);
      const refused = await post(u, long);
      expect(refused.status).toBe(429);
      expect(refused.json.error).toMatchObject({ type: "rate_limit_error", code: "server_busy" });
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers.get("retry-after-ms"))).toBeGreaterThanOrEqual(50);
      // Both clients hang up: the running generation stops, the waiting one never starts.
      running.abort();
      waiting.abort();
      await Promise.all([r1, r2]);
      await until(() => slow.service.health()[0]!.stats!.cancelled === 2 && slow.service.health()[0]!.stats!.running === 0);
      const stats = slow.service.health()[0]!.stats!;
      // The hung-up generation stopped long before its 900 tokens.
      expect(stats.completionTokens).toBeGreaterThan(0);
      expect(stats.completionTokens).toBeLessThan(900);
      expect(stats.rejected).toBe(1);
    } finally {
      await slow.close();
    }
  });

  it("asks for the API key when it has one", async () => {
    const keyed = await serve({ tiny }, { apiKey: "sk-test-123" });
    try {
      const body = { model: "tiny", messages: [{ role: "user", content: "hi" }], max_tokens: 2 };
      const none = await post(`${keyed.baseUrl}/chat/completions`, body);
      expect(none.status).toBe(401);
      expect(none.json.error).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
      expect((await post(`${keyed.baseUrl}/chat/completions`, body, { authorization: "Bearer sk-wrong-12" })).status).toBe(401);
      expect((await post(`${keyed.baseUrl}/chat/completions`, body, { authorization: "Bearer sk-test-123" })).status).toBe(200);
    } finally {
      await keyed.close();
    }
  });

  it("names models by folder or ID=DIR, and serve-policy refuses a folder that is not a checkpoint", async () => {
    expect(parseModelArg("/x/runs/my-policy")).toEqual({ id: "my-policy", dir: "/x/runs/my-policy" });
    expect(parseModelArg("qwen=/x/y")).toEqual({ id: "qwen", dir: "/x/y" });
    expect(await main(["serve-policy", join(tempDir(), "nothing"), "--port", "0"])).toBe(2);
    expect(io.err).toMatch(/bad input: .*nothing: not a checkpoint folder/);
    expect(await main(["serve-policy"])).toBe(2);
    expect(io.err).toMatch(/give at least one checkpoint folder/);
    // One id for two folders is a usage error, before any model loads.
    expect(await main(["serve-policy", "a=/x/one", "a=/x/two", "--port", "0"])).toBe(2);
    expect(io.err).toContain('socialworld serve-policy: two models are served as "a": name them apart (ID=DIR)');
    process.env.SOCIALWORLD_POLICY_PORT = "eighty";
    try {
      expect(await main(["serve-policy", "/x/one"])).toBe(2);
      expect(io.err).toContain('$SOCIALWORLD_POLICY_PORT: expected a port number (got "eighty")');
    } finally {
      delete process.env.SOCIALWORLD_POLICY_PORT;
    }
  });
});

describe("the main server's /v1", () => {
  it("serves the policies under <store>/policies", async () => {
    const store = tempDir("sw-llm-store-");
    mkdirSync(join(store, "policies"));
    cpSync(v.dir, join(store, "policies", "tomi-policy"), { recursive: true });
    const s = await startServer({ port: 0, host: "127.0.0.1", store, dataRoots: [], demo: false, clientDir: join(store, "no-client"), adminToken: "x".repeat(20) });
    try {
      const models = (await (await fetch(`${s.url}v1/models`)).json()) as any;
      expect(models.data.map((m: { id: string }) => m.id)).toEqual(["tomi-policy"]);
      const r = await post(`${s.url}v1/chat/completions`, { model: "tomi-policy", temperature: 0, messages: [system(), { role: "user", content: v.q1.prompt }] });
      expect(r.json.choices[0].message.content).toBe(FIRST_REPLY);
      // The rest of the server is as it was.
      expect(((await (await fetch(`${s.url}api/health`)).json()) as any).ok).toBe(true);
    } finally {
      await s.close();
    }
  });
});

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}
