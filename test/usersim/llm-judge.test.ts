/**
 * The LLM judge (worlds/usersim/llm-judge.ts) against a scripted judge model that reads the
 * prompt it is sent: one request per tag for a group of replies, malformed replies never sent,
 * scores combined as the offline judge combines them, a cache per (tag, generation, reference),
 * batches of at most maxBatch, unreadable answers asked again then judged offline, and endpoint
 * failures that fail the judgement without being cached.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JudgeModel } from "../../worlds/question/benchmark.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { simulationAnswer, UsersimBenchmark, type UsersimBenchItem } from "../../worlds/usersim/benchmark.js";
import { RESPONSE_ONLY_HIERARCHY } from "../../worlds/usersim/hierarchy.js";

/** What the model is sent: the generations by number and the reference (the last <<< >>> block). */
function readPrompt(prompt: string): { generations: string[]; reference: string; tag: string } {
  const tag = /how well a simulated user's (\S+) matches/.exec(prompt)![1]!;
  const blocks = [...prompt.matchAll(/<<<\n([\s\S]*?)\n>>>/g)];
  const list = prompt.slice(prompt.indexOf("by number:\n") + "by number:\n".length, prompt.indexOf("\n\nHow to score"));
  const generations = list.split("\n").map((l) => JSON.parse(l.replace(/^\d+\. /, "")) as string);
  return { generations, reference: blocks.at(-1)![1]!, tag };
}

/** Scores 1 for the reference itself and 0.25 otherwise; `answer` can replace what it says. */
function scriptedModel(answer?: (prompt: string, n: number) => string | Promise<string>): JudgeModel & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    id: "llm:scripted@test",
    prompts,
    async ask(prompt) {
      prompts.push(prompt);
      const { generations, reference } = readPrompt(prompt);
      if (answer) return answer(prompt, generations.length);
      return JSON.stringify({ scores: generations.map((g, i) => ({ id: i + 1, reason: "r", score: g === reference ? 1 : 0.25 })) });
    },
  };
}

async function fixture(model: JudgeModel, opts: { maxBatch?: number; hierarchy?: typeof RESPONSE_ONLY_HIERARCHY } = {}): Promise<{ b: UsersimBenchmark; items: UsersimBenchItem[] }> {
  const dir = mkdtempSync(join(tmpdir(), "sw-usersim-llm-"));
  const data = join(dir, "g.jsonl");
  writeFileSync(data, generateUsersim(6, 11).jsonl);
  const b = new UsersimBenchmark({ judgeModel: model, ...(opts.hierarchy ? { hierarchy: opts.hierarchy } : {}) });
  if (opts.maxBatch) (b.llm as unknown as { maxBatch: number }).maxBatch = opts.maxBatch;
  return { b, items: await b.load(data) };
}

describe("the LLM judge", () => {
  it("asks one request per tag for a group, never sends a malformed reply, and combines the scores", async () => {
    const model = scriptedModel();
    const { b, items } = await fixture(model);
    const item = items[0]!;
    const task = b.task(item, "vanilla");
    const perfect = simulationAnswer(task);
    const other = task.candidates![0]!;
    const verdicts = await b.assess!(item, [perfect, other, "just some words"]);
    // Seven tags (six states and the response), two well-formed generations each.
    expect(model.prompts).toHaveLength(7);
    for (const p of model.prompts) expect(readPrompt(p).generations).toHaveLength(2);
    expect(new Set(model.prompts.map((p) => readPrompt(p).tag))).toEqual(new Set(["stance", "emotion", "belief", "value", "goal", "communication", "response"]));
    expect(model.prompts.some((p) => p.includes("just some words"))).toBe(false);
    expect(verdicts[0]).toMatchObject({ correct: true, score: 1, reward: 1 });
    expect(verdicts[0]!.detail).toMatchObject({ states: { stance: { score: 1, method: "llm" } } });
    // The random candidate matches no tag's reference exactly: 0.25 everywhere, so 0.25 overall.
    expect(verdicts[1]).toMatchObject({ correct: true, score: 0.25, reward: 0.25 });
    expect(verdicts[2]).toMatchObject({ correct: false, score: 0, reward: -1 });
    expect(b.llm!.stats).toMatchObject({ requests: 7, scored: 14, cached: 0, fallbacks: 0 });
  });

  it("keeps each score per (tag, generation, reference): asked again, nothing is sent", async () => {
    const model = scriptedModel();
    const { b, items } = await fixture(model);
    const perfect = simulationAnswer(b.task(items[1]!, "vanilla"));
    const first = await b.assess!(items[1]!, [perfect]);
    const again = await b.assess!(items[1]!, [perfect, perfect]);
    expect(model.prompts).toHaveLength(7);
    expect(again.map((v) => v.score)).toEqual([first[0]!.score, first[0]!.score]);
    expect(b.llm!.stats.cached).toBe(14);
    // Another record: only the tags whose reference differs are asked (the key is the pair, not the conversation).
    const before = model.prompts.length;
    await b.assess!(items[2]!, [perfect]);
    const asked = model.prompts.slice(before).map((p) => readPrompt(p).tag);
    const h = b.hierarchy;
    const refOf = (i: number, tag: string) => (tag === "response" ? items[i]!.record.reply : items[i]!.record.states[tag]);
    expect(asked.sort()).toEqual([...h.states.map((d) => d.name), "response"].filter((t) => refOf(1, t) !== refOf(2, t)).sort());
    expect(asked.length).toBeGreaterThan(0);
  });

  it("sends at most maxBatch generations a request", async () => {
    const model = scriptedModel();
    const { b, items } = await fixture(model, { maxBatch: 2, hierarchy: RESPONSE_ONLY_HIERARCHY });
    const replies = ["a", "b", "c", "d", "e"].map((x) => `<response>\nreply ${x}\n</response>`);
    const verdicts = await b.assess!(items[0]!, replies);
    expect(model.prompts.map((p) => readPrompt(p).generations.length)).toEqual([2, 2, 1]);
    expect(verdicts.map((v) => v.score)).toEqual([0.25, 0.25, 0.25, 0.25, 0.25]);
  });

  it("asks again when the answer does not read, then judges that batch offline and counts it", async () => {
    const model = scriptedModel(() => "I think they are all quite good.");
    const { b, items } = await fixture(model, { hierarchy: RESPONSE_ONLY_HIERARCHY });
    const item = items[0]!;
    const [v] = await b.assess!(item, [`<response>\n${item.record.reply}\n</response>`]);
    expect(model.prompts).toHaveLength(2);
    expect(b.llm!.stats).toMatchObject({ requests: 2, fallbacks: 1 });
    expect(b.llm!.stats.lastFallback).toMatch(/^response: the judge's answer has no JSON object/);
    // The offline judge's ROUGE-L of the real reply against itself.
    expect(v).toMatchObject({ correct: true, score: 1 });
    expect(v!.detail).toMatchObject({ response: 1 });
    // A score out of range does not read either.
    const wrong = scriptedModel((_p, n) => JSON.stringify({ scores: Array.from({ length: n }, (_, i) => ({ id: i + 1, reason: "r", score: 7 })) }));
    const f = await fixture(wrong, { hierarchy: RESPONSE_ONLY_HIERARCHY });
    await f.b.assess!(f.items[0]!, ["<response>\nok\n</response>"]);
    expect(f.b.llm!.stats.lastFallback).toMatch(/a score is from 0 to 1/);
  });

  it("fails the judgement when the endpoint fails for good, and asks again next time (nothing cached)", async () => {
    let down = true;
    const model = scriptedModel((_p, n) => {
      if (down) throw new Error("503 after 3 retries");
      return JSON.stringify({ scores: Array.from({ length: n }, (_, i) => ({ id: i + 1, reason: "r", score: 0.5 })) });
    });
    const { b, items } = await fixture(model, { hierarchy: RESPONSE_ONLY_HIERARCHY });
    const reply = "<response>\nfine\n</response>";
    await expect(b.assess!(items[0]!, [reply])).rejects.toThrow("503 after 3 retries");
    down = false;
    expect((await b.assess!(items[0]!, [reply]))[0]).toMatchObject({ score: 0.5, reward: 0.5 });
    expect(model.prompts).toHaveLength(2);
  });
});
