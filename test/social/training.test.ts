/**
 * The social world as training data: GRPO's decision points (a benchmark file's tasks, or the
 * generator's, with `train grpo --world social`) score a reply exactly as the world's reward does
 * (rewards.ts: -1 off the strict schema, type match + ROUGE-L of the content), and rollouts log
 * as benchmark items the judge reads; the SFT export of a run answers with the label's JSON.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parquetReadObjects } from "hyparquet";
import { describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { compactPrompt, SOCIAL_INSTRUCTIONS } from "../../worlds/social/prompts.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { benchRun, capture } from "../exports/helpers.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import { generatedPoints } from "../../trainers/grpo/generated-points.js";
import { scoreReply } from "../../trainers/grpo/reward.js";
import { generateSocial } from "../../worlds/social/generator.js";
import { socialReward } from "../../worlds/social/rewards.js";
import type { SocialBenchItem } from "../../worlds/social/benchmark.js";
import { tempDir } from "../policy/fixtures.js";

const config = GrpoConfigSchema.parse({ rewards: { exact: 1, rougeL: 1, f1: 0, format: 0 } });

describe("social decision points", () => {
  it("reward a reply as the world's reward does", async () => {
    const dir = tempDir("sw-social-points-");
    writeFileSync(join(dir, "t.jsonl"), generateSocial(4, 3).jsonl);
    const src = await BenchPoints.open("social", join(dir, "t.jsonl"), "vanilla");
    expect(src.size).toBeGreaterThan(20);
    for (let i = 0; i < src.size; i++) {
      const p = (await src.point(i)) as Awaited<ReturnType<BenchPoints["point"]>>;
      const task = (p.item as SocialBenchItem).task;
      const replies = [
        p.item.answer as string,
        JSON.stringify({ action: "comment", target: task.parent, content: "I am not sure about this at all." }),
        JSON.stringify({ action: "like", target: task.parent }),
        JSON.stringify({ action: "ignore", target: task.parent }),
        JSON.stringify({ action: "like", target: "p999" }),
        `Sure! ${p.item.answer as string}`,
        "{not json",
      ];
      for (const text of replies) {
        const got = scoreReply(p, { text, tokens: 10, finish: "stop", logprob: 0 }, config);
        const want = socialReward(text, task);
        expect(got.reward, `${p.id}: ${text}`).toBeCloseTo(want.reward, 12);
        expect(got.format).toBe(want.format);
      }
      // The label scores 1 + (1 when it has content).
      expect(scoreReply(p, { text: p.item.answer as string, tokens: 1, finish: "stop", logprob: 0 }, config).reward).toBe(task.label.content.trim() ? 2 : 1);
    }
  });

  it("come from the generator with train grpo --world social: the data is written to OUT once and checked after", async () => {
    const out = tempDir("sw-social-world-");
    const a = await generatedPoints("social", 3, 7, out);
    const file = join(out, "train-social-n3-seed7.jsonl");
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, "utf8")).toBe(generateSocial(3, 7).jsonl);
    const b = await generatedPoints("social", 3, 7, out);
    expect(b.dataId).toBe(a.dataId);
    expect(b.size).toBe(a.size);
    writeFileSync(file, readFileSync(file, "utf8").replace(/"time":0/, '"time":1'));
    await expect(generatedPoints("social", 3, 7, out)).rejects.toThrow("is not what the social generator writes for 3 trees of seed 7");
  });
});

describe("train grpo --world social --context", () => {
  it("short: the rollouts are asked, byte for byte, the prompts bench social --context short asks a policy, with its facts (--stance, --agreement) too", async () => {
    const c = capture();
    try {
      const dir = tempDir("sw-social-short-");
      const data = join(dir, "t.jsonl");
      writeFileSync(data, generateSocial(2, 7).jsonl);
      const bench = await loadBenchmark("social", { context: "short" });
      const items = await bench.load(data);
      // A tiny policy whose tokenizer knows these prompts (the model's 512 positions hold them).
      const m = await createFromScratch({ preset: "tiny", seed: 2, corpus: [...items.map((i) => bench.task(i, "vanilla").prompt), ...items.map((i) => i.answer as string)] });
      const model = join(dir, "model");
      saveCheckpoint(model, m.model, m.files);
      type Rec = { kind: string; result: { id: string }; turns: { prompt: string; observation?: string }[] };
      const prompts = async (store: string) => {
        const s = await RunStore.open(store);
        const run = s.list()[0]!;
        return { run, recs: readEpisodeLog<Rec>(s.episodesPath(run)).records.filter((r) => r.kind === "benchmark_item") };
      };
      expect(await main(["bench", "social", "--data", data, "--context", "short", "--agent", `policy:${model}?max_new_tokens=24`, "--store", join(dir, "bench"), "--quiet"]), c.err).toBe(0);
      // Item ids are FILE#TASK; GRPO's copy of the trees is its own file.
      const task = (id: string) => id.slice(id.indexOf("#") + 1);
      const asked = new Map((await prompts(join(dir, "bench"))).recs.map((r) => [task(r.result.id), r.turns[0]!.prompt]));
      expect(asked.size).toBe(items.length);
      for (const item of items) expect(asked.get(task(item.id))).toContain(compactPrompt((item as SocialBenchItem).task));

      const args = (context: string, out: string) => ["train", "grpo", "--model", model, "--world", "social", "--episodes", "2", "--world-seed", "7", "--context", context,
        "--out", join(dir, out), "--store", join(dir, `store-${out}`), "--steps", "1", "--prompts", "4", "--group-size", "2", "--max-new-tokens", "24", "--seed", "1", "--quiet"];
      expect(await main(args("short", "short")), c.err).toBe(0);
      const short = await prompts(join(dir, "store-short"));
      expect(short.run.params).toMatchObject({ benchmark: "social", options: { context: "short" } });
      expect(short.recs).toHaveLength(8);
      for (const r of short.recs) {
        expect(r.turns[0]!.prompt, r.result.id).toBe(asked.get(task(r.result.id)));
        expect(r.turns[0]!.prompt).not.toContain(SOCIAL_INSTRUCTIONS);
      }
      // The default is the full prompt, which the short one is not.
      expect(await main(args("full", "full")), c.err).toBe(0);
      const full = await prompts(join(dir, "store-full"));
      for (const r of full.recs) {
        expect(r.turns[0]!.prompt).toContain(SOCIAL_INSTRUCTIONS);
        expect(r.turns[0]!.prompt).not.toBe(asked.get(task(r.result.id)));
      }
      // With the facts that read the latent block (--stance, --agreement): bench, GRPO's rollouts and
      // the SFT export of the bench run ask the same prompts, byte for byte, each with the facts.
      const facts = ["--stance", "--agreement"];
      expect(await main(["bench", "social", "--data", data, "--context", "short", ...facts, "--agent", `policy:${model}?max_new_tokens=24`, "--store", join(dir, "bench-facts"), "--quiet"]), c.err).toBe(0);
      const benchFacts = await prompts(join(dir, "bench-facts"));
      expect(benchFacts.run.params).toMatchObject({ options: { context: "short", stance: true, agreement: true } });
      const askedFacts = new Map(benchFacts.recs.map((r) => [task(r.result.id), r.turns[0]!.prompt]));
      for (const item of items) {
        const withFacts = compactPrompt((item as SocialBenchItem).task, { stance: true, agreement: true });
        expect(withFacts).toMatch(/It (dis)?agrees with you\.|It takes no side\.|You take no side\./);
        expect(askedFacts.get(task(item.id))).toContain(withFacts);
        expect(askedFacts.get(task(item.id))).not.toBe(asked.get(task(item.id)));
      }
      expect(await main([...args("short", "facts"), ...facts]), c.err).toBe(0);
      const grpoFacts = await prompts(join(dir, "store-facts"));
      expect(grpoFacts.run.params).toMatchObject({ benchmark: "social", options: { context: "short", stance: true, agreement: true } });
      expect(grpoFacts.recs).toHaveLength(8);
      for (const r of grpoFacts.recs) expect(r.turns[0]!.prompt, r.result.id).toBe(askedFacts.get(task(r.result.id)));
      expect(await main(["export", "--run", benchFacts.run.id, "--format", "chat", "--out", join(dir, "facts.chat"), "--store", join(dir, "bench-facts")]), c.err).toBe(0);
      const exported = readFileSync(join(dir, "facts.chat"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { messages: { role: string; content: string }[] });
      expect(exported).toHaveLength(items.length);
      expect(exported.map((x) => x.messages[0]!.content).sort()).toEqual(items.map((item) => compactPrompt((item as SocialBenchItem).task, { stance: true, agreement: true })).sort());
      // A world that is not trained on its generator's set takes no --context.
      expect(await main(["train", "grpo", "--model", model, "--world", "tomi", "--context", "short", "--out", join(dir, "tomi"), "--store", join(dir, "store-tomi"), "--steps", "1", "--quiet"])).toBe(2);
      expect(c.err).toContain("--context does not apply to tomi");
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe("social exports", () => {
  it("write the label's JSON as the response (SFT Parquet, chat JSONL) and as verl's ground truth", async () => {
    capture();
    try {
      const run = await benchRun("social", 3, 11);
      const rows = async (file: string) => {
        const buf = readFileSync(file);
        return (await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) })) as Record<string, unknown>[];
      };
      for (const format of ["sft", "verl", "chat"]) expect(await main(["export", "--run", run.runId, "--format", format, "--out", join(run.dir, `out.${format}`), "--store", run.store])).toBe(0);
      const bench = await loadBenchmark("social");
      const items = await bench.load(run.data);
      const sft = await rows(join(run.dir, "out.sft"));
      const verl = await rows(join(run.dir, "out.verl"));
      const chat = readFileSync(join(run.dir, "out.chat"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { messages: { content: string }[] });
      expect(sft).toHaveLength(items.length);
      items.forEach((item, i) => {
        expect(sft[i]!.prompt).toBe(bench.task(item, "vanilla").prompt);
        expect(sft[i]!.response).toBe(item.answer);
        expect(chat[i]!.messages[1]!.content).toBe(item.answer);
        expect(JSON.stringify(verl[i]!.reward_model)).toContain(JSON.stringify(item.answer).slice(1, -1));
        expect(verl[i]!.data_source).toBe("socialworld/social");
      });
    } finally {
      vi.restoreAllMocks();
    }
  });
});
