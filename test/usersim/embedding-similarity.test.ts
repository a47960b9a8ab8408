/**
 * The offline judge's free text by embedding similarity (`bench usersim --embedder SPEC`): the
 * response (and a state outside the vocabulary's words) scored by the cosine of sentence
 * embeddings from FANToM's embedders, here a tiny encoder written by the test (a token table
 * behind a Gather, mean-pooled), so each score is checked by hand; the report names the scorer.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { DIM, table, writeModelFolder } from "../onnx-model-folder.js";
import { tempDir } from "../policy/fixtures.js";
import { main } from "../../cli/main.js";
import { BenchmarkOptionError } from "../../worlds/question/benchmark.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { world } from "../../worlds/usersim/index.js";
import { simulationAnswer, type UsersimBenchmark } from "../../worlds/usersim/benchmark.js";
import { embeddingSimilarity } from "../../worlds/usersim/embedding-similarity.js";
import { judgeText } from "../../worlds/usersim/judge.js";
import { rougeL } from "../../worlds/core/rewards/rouge-l.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { RESPONSE_ONLY_HIERARCHY } from "../../worlds/usersim/hierarchy.js";
import { parseReply } from "../../worlds/usersim/reply.js";

const io = captureOutput();

const VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "i", "like", "bike", "lanes", "hate", "cars", "."];
const ROWS = table("usersim-embedder", VOCAB);
const DIR = writeModelFolder(ROWS, VOCAB);
const RESPONSE_ONLY = join(import.meta.dirname, "../../worlds/usersim/hierarchies/response-only.json");

/** The encoder's sentence vector by hand: the mean of its tokens' rows, [CLS] and [SEP] included, unknown words [UNK]. */
function sentence(words: string[]): number[] {
  const ids = [2, ...words.map((w) => (VOCAB.includes(w) ? VOCAB.indexOf(w) : 1)), 3];
  return Array.from({ length: DIM }, (_, d) => ids.reduce((s, t) => s + ROWS[t]![d]!, 0) / ids.length);
}
function cos(a: number[], b: number[]): number {
  const dot = a.reduce((s, x, i) => s + x * b[i]!, 0);
  return dot / (Math.hypot(...a) * Math.hypot(...b));
}

function data(): string {
  const file = join(mkdtempSync(join(tmpdir(), "sw-usersim-embed-")), "g.jsonl");
  writeFileSync(file, generateUsersim(8, 5).jsonl);
  return file;
}

describe("embedding similarity of free text", () => {
  it("is the cosine of the mean-pooled sentence vectors, 0 when negative", async () => {
    const s = await embeddingSimilarity(`onnx:${DIR}`);
    expect(s.id).toBe(`cosine of onnx:${DIR} sentence embeddings`);
    const expected = cos(sentence(["i", "like", "bike", "lanes"]), sentence(["i", "hate", "cars", "."]));
    expect(s.score("I like bike lanes", "I hate cars.")).toBeCloseTo(Math.max(0, expected), 5);
    expect(s.score("bike zebra", "lanes")).toBeCloseTo(Math.max(0, cos(sentence(["bike", "zebra"]), sentence(["lanes"]))), 5);
    expect(s.score("I like bike lanes", "I like bike lanes")).toBeCloseTo(1, 6);
  });

  it("scores the response in bench usersim, the structured states as before, and the title names it", async () => {
    const b = (await world.benchmark!.create({ embedder: `onnx:${DIR}` })) as UsersimBenchmark;
    expect(b.title).toBe(`User simulation (free text: cosine of onnx:${DIR} sentence embeddings)`);
    const item = (await b.load(data()))[0]!;
    const truth = simulationAnswer(b.task(item, "vanilla"))!;
    const reply = truth.replace(/<response>\n[\s\S]*\n<\/response>/, "<response>\nI like bike lanes.\n</response>");
    const v = b.judge(item, reply);
    const detail = v.detail as unknown as ReturnType<typeof judgeText>;
    const s = await embeddingSimilarity(`onnx:${DIR}`);
    expect(detail.response).toBeCloseTo(s.score("I like bike lanes.", item.record.reply), 10);
    expect(detail.response).not.toBeCloseTo(rougeL("I like bike lanes.", item.record.reply).fmeasure, 3);
    for (const st of Object.values(detail.states)) expect(st).toEqual({ score: 1, method: "structured" });
    // Without --embedder: ROUGE-L, as before.
    const plain = (await world.benchmark!.create({})) as UsersimBenchmark;
    expect(plain.title).toBe("User simulation");
    expect((plain.judge(item, reply).detail as unknown as ReturnType<typeof judgeText>).response).toBeCloseTo(rougeL("I like bike lanes.", item.record.reply).fmeasure, 10);
  });

  it("refuses a folder without a model, or an LLM judge beside it, before a run exists", async () => {
    const empty = mkdtempSync(join(tmpdir(), "sw-usersim-embed-empty-"));
    await expect(world.benchmark!.create({ embedder: `onnx:${empty}` })).rejects.toThrow(BenchmarkOptionError);
    await expect(world.benchmark!.create({ embedder: `onnx:${empty}` })).rejects.toThrow(`--embedder: no model.onnx or onnx/model.onnx in ${empty}`);
    // With an LLM judge the model scores the free text: an embedder would go unused.
    const judgeModel = { id: "llm:judge@http://127.0.0.1:1", ask: () => Promise.reject(new Error("not asked")) };
    await expect(world.benchmark!.create({ embedder: "lexical", judgeModel })).rejects.toThrow("--embedder: scores the offline judge's free text; with --judge the model scores it");
  });

  it("bench usersim --embedder onnx:DIR: the report's title names the scorer", async () => {
    const json = join(tempDir("sw-usersim-embed-out-"), "r.json");
    const args = ["bench", "usersim", "--data", data(), "--agent", "simulation", "--embedder", `onnx:${DIR}`, "--store", tempDir("sw-usersim-embed-store-"), "--json", json, "--quiet"];
    expect(await main(args), io.err).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8")) as { title: string; accuracy: number; metrics: Record<string, number> };
    expect(report.title).toContain(`free text: cosine of onnx:${DIR} sentence embeddings`);
    expect(report.metrics.response).toBeGreaterThan(0);
  });

  it("train grpo rewards with the bench's scorer: a group judged by BenchPoints gets the cosine, not ROUGE-L", async () => {
    const file = data();
    const points = await BenchPoints.open("usersim", file, "vanilla", { options: { embedder: `onnx:${DIR}` } });
    const p = await points.point(0);
    const item = (p as unknown as { item: { record: { reply: string } } }).item;
    const s = await embeddingSimilarity(`onnx:${DIR}`);
    const truth = simulationAnswer((p as unknown as { task: Parameters<typeof simulationAnswer>[0] }).task);
    const reply = truth.replace(/<response>\n[\s\S]*\n<\/response>/, "<response>\nI like bike lanes.\n</response>");
    const [judged] = await p.judge!([reply]);
    // Six states exact (1 each), the response by the cosine: the alignment is their mean.
    const cosine = s.score("I like bike lanes.", item.record.reply);
    expect(judged!.reward).toBeCloseTo((6 + cosine) / 7, 10);
    expect(judged!.levels!.at(-1)).toBeCloseTo(cosine, 10);
    expect(cosine).not.toBeCloseTo(rougeL("I like bike lanes.", item.record.reply).fmeasure, 3);
  });

  it("train grpo --world usersim --embedder onnx:DIR: every well-formed rollout's reward is the cosine, and the run records the scorer", async () => {
    const records = generateUsersim(12, 5);
    const corpusFile = join(mkdtempSync(join(tmpdir(), "sw-usersim-embed-corpus-")), "g.jsonl");
    writeFileSync(corpusFile, records.jsonl);
    const asked = (await world.benchmark!.create({ hierarchy: RESPONSE_ONLY })) as UsersimBenchmark;
    const corpus = (await asked.load(corpusFile)).map((item) => asked.task(item, "vanilla").prompt);
    const m = await createFromScratch({ preset: "1m", seed: 3, corpus: [...corpus, "<response>\n</response>"] });
    const model = tempDir("sw-usersim-embed-model-");
    saveCheckpoint(model, m.model, m.files);
    const store = tempDir("sw-usersim-embed-store-");
    const code = await main(["train", "grpo", "--model", model, "--world", "usersim", "--episodes", "12", "--world-seed", "5", "--hierarchy", RESPONSE_ONLY, "--embedder", `onnx:${DIR}`,
      "--out", tempDir("sw-usersim-embed-train-"), "--store", store, "--steps", "1", "--prompts", "2", "--group-size", "3", "--max-new-tokens", "48", "--quiet"]);
    expect(code, io.err).toBe(0);
    const s = await RunStore.open(store);
    const run = s.list()[0]!;
    expect(run.params).toMatchObject({ benchmark: "usersim", options: { hierarchy: RESPONSE_ONLY, embedder: `onnx:${DIR}`, split: "train" } });
    const items = new Map((await asked.load(join(store, "generated", "usersim-n12-seed5.jsonl"))).map((item) => [item.id, item]));
    const scorer = await embeddingSimilarity(`onnx:${DIR}`);
    const recs = readEpisodeLog<{ result: { id: string }; turns: { raw: string; reward: number; info: { rewardParts: { format: boolean } } }[] }>(s.episodesPath(run)).records;
    expect(recs).toHaveLength(6);
    let wellFormed = 0;
    for (const r of recs) {
      const t = r.turns[0]!;
      const parsed = parseReply(t.raw, RESPONSE_ONLY_HIERARCHY);
      expect(t.info.rewardParts.format).toBe(parsed.ok);
      if (!parsed.ok) {
        expect(t.reward).toBe(-1);
        continue;
      }
      wellFormed++;
      // Response-only: the reward is the response's score, the cosine against the real reply.
      expect(t.reward).toBeCloseTo(scorer.score(parsed.action.response, items.get(r.result.id)!.record.reply), 10);
    }
    expect(wellFormed).toBeGreaterThan(0);
  }, 60_000);

  it("train grpo --embedder: a folder without a model, or --judge beside it, stops before a run exists", async () => {
    const empty = mkdtempSync(join(tmpdir(), "sw-usersim-embed-empty-"));
    const store = tempDir("sw-usersim-embed-store-");
    const out = join(tempDir(), "out");
    const args = ["train", "grpo", "--model", tempDir(), "--world", "usersim", "--episodes", "8", "--out", out, "--store", store, "--quiet"];
    expect(await main([...args, "--embedder", `onnx:${empty}`])).toBe(2);
    expect(io.err).toContain(`--embedder: no model.onnx or onnx/model.onnx in ${empty}`);
    expect(await main([...args, "--embedder", "lexical", "--judge", "llm:judge@http://127.0.0.1:1"])).toBe(2);
    expect(io.err).toContain("--embedder: scores the offline judge's free text; with --judge the model scores it");
    expect(await main([...args, "--embedder", "bert"])).toBe(2);
    expect(io.err).toContain("expected lexical or onnx:DIR");
    expect((await RunStore.open(store)).list()).toHaveLength(0);
    expect(existsSync(out)).toBe(false);
  });
});
