/**
 * `socialworld train grpo` end to end on a tiny model: a benchmark file (generated ToMi) in
 * simulation mode and a world's scripted episodes; metrics, checkpoints and the store run with
 * every rollout, which `export` reads back as training data; resume and usage errors.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { questionText } from "../../agents/policy/question-prompt.js";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { tempDir, tinyCheckpoint } from "../policy/fixtures.js";

const io = captureOutput();

async function tomiFile(n: number): Promise<string> {
  const dir = tempDir("sw-grpo-data-");
  const f = await generateTomi(n, 4);
  writeFileSync(join(dir, "gen.txt"), f.txt);
  writeFileSync(join(dir, "gen.trace"), f.trace);
  return join(dir, "gen.txt");
}

describe("socialworld train grpo", () => {
  it("trains on a benchmark file, logs every rollout as a benchmark run that exports, and resumes", async () => {
    const data = await tomiFile(12);
    // The 1m preset with a tokenizer built from the prompts (as \`train sft --init\` builds one): a
    // ToMi question's socialized context needs more than tiny's 512 positions.
    const bench = new TomiBenchmark();
    const corpus = await Promise.all(bench.load(data).map((item) => questionText(bench.task(item, "simulation"))));
    const m = await createFromScratch({ preset: "1m", seed: 8, corpus });
    const model = tempDir("sw-grpo-model-");
    saveCheckpoint(model, m.model, m.files);
    const out = tempDir("sw-grpo-out-");
    const store = tempDir("sw-grpo-store-");
    const args = ["train", "grpo", "--model", model, "--bench", "tomi", "--data", data, "--mode", "simulation", "--out", out, "--store", store,
      "--prompts", "2", "--group-size", "3", "--max-new-tokens", "32", "--lr", "1e-3", "--kl", "0.01", "--save-every", "1", "--quiet"];
    expect(await main([...args, "--steps", "2"])).toBe(0);
    expect(io.out).toMatch(/trained 2 GRPO steps on ToMi .*gen\.txt \(simulation mode, 12 questions\): last reward -?[\d.]+, accuracy [\d.]+%; model in .*; rollouts in run (\S+)/);
    const runId = /rollouts in run (\S+)/.exec(io.out)![1]!;
    const lines = readFileSync(join(out, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { step: number; groups: number; kl: number });
    expect(lines.map((l) => l.step)).toEqual([1, 2]);
    expect(lines[0]!.groups).toBe(2);
    // Every field docs/training.md lists, in every record (tooLong too when nothing was left out).
    const fields = "step, reward, rewardStd, accuracy, formatRate, f1, rougeL, kl, entropy, clipFraction, dualClipFraction, loss, policyLoss, responseLength, responseLengthMax, truncatedRate, groups, droppedGroups, rolloutBatches, updates, lr, gradNorm, seconds, rolloutSeconds, tokensPerSecond, tooLong";
    for (const l of lines) expect(Object.keys(l).sort()).toEqual(fields.split(", ").sort());
    expect(lines.map((l) => (l as { tooLong?: number }).tooLong)).toEqual([0, 0]);
    for (const f of ["model.safetensors", "checkpoint-2/trainer_state.json", "checkpoint-2/optimizer.safetensors", "reference/model.safetensors"]) expect(existsSync(join(out, f)), f).toBe(true);

    // 2 steps x 2 questions x 3 samples, each a benchmark_item with its prompt, reply and reward.
    const s = await RunStore.open(store);
    const run = s.get(runId)!;
    expect(run.kind).toBe("grpo");
    expect(run.status).toBe("done");
    const recs = readEpisodeLog<{ kind: string; mode: string; turns: { prompt: string; raw: string; reward: number; info: { grpo: { step: number } } }[] }>(s.episodesPath(run)).records;
    expect(recs).toHaveLength(12);
    expect(recs.every((r) => r.kind === "benchmark_item" && r.mode === "simulation")).toBe(true);
    expect(recs[0]!.turns[0]!.prompt).toContain("Where each object was first and is now, and where each one and each two together saw it last:");
    expect(recs.map((r) => r.turns[0]!.info.grpo.step)).toEqual([1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]);

    const chat = join(tempDir(), "rollouts.jsonl");
    expect(await main(["export", "--run", runId, "--format", "chat", "--out", chat, "--store", store])).toBe(0);
    expect(readFileSync(chat, "utf8").trim().split("\n")).toHaveLength(12);

    // Two more steps from the last checkpoint; other settings are refused.
    io.err = "";
    expect(await main([...args, "--steps", "3", "--resume", "auto"])).toBe(2);
    expect(io.err).toMatch(/--resume: .*checkpoint-2 was trained with steps=2, not 3/);

    // A policy agent in simulation mode is asked exactly what the trainer asked.
    io.out = "";
    expect(await main(["bench", "tomi", "--data", data, "--agent", `policy:${out}?max_new_tokens=4`, "--mode", "simulation", "--store", store, "--quiet", "--json", join(out, "r.json")])).toBe(0);
    const benchRun = (JSON.parse(readFileSync(join(out, "r.json"), "utf8")) as { runId: string }).runId;
    const s2 = await RunStore.open(store);
    type Rec = { result: { index: number }; turns: { prompt: string }[] };
    const asked = new Map(readEpisodeLog<Rec>(s2.episodesPath(s2.get(benchRun)!)).records.map((r) => [r.result.index, r.turns[0]!.prompt]));
    expect(asked.size).toBe(12);
    for (const r of recs as unknown as Rec[]) expect(r.turns[0]!.prompt).toBe(asked.get(r.result.index));
    expect(asked.get(0)).toContain("Where each object was first and is now, and where each one and each two together saw it last:\n- story ");
  });

  it("trains on a world's scripted episodes", async () => {
    const { dir: model } = await tinyCheckpoint(9);
    const out = tempDir("sw-grpo-out-");
    const store = tempDir("sw-grpo-store-");
    expect(await main(["train", "grpo", "--model", model, "--world", "tomi", "--episodes", "2", "--out", out, "--store", store, "--steps", "1", "--prompts", "2", "--group-size", "2", "--max-new-tokens", "16", "--quiet"])).toBe(0);
    expect(io.err).toMatch(/world tomi \(2 episodes, \d+ decision points\)/);
    const runId = /rollouts in run (\S+)/.exec(io.out)![1]!;
    const s = await RunStore.open(store);
    const recs = readEpisodeLog<{ kind: string; world: string; turns: { reference: unknown; source: string }[] }>(s.episodesPath(s.get(runId)!)).records;
    expect(recs).toHaveLength(2);
    expect(recs[0]).toMatchObject({ kind: "room_episode", world: "tomi" });
    expect(recs[0]!.turns).toHaveLength(2);
    expect(recs[0]!.turns[0]!.reference).toHaveProperty("type");
    // Sampled under the action grammar (constrain defaults to schema): an untrained policy's
    // every reply is a valid action.
    for (const r of recs) for (const t of r.turns) expect(t.source).toBe("agent");
  });

  it("explains usage errors", async () => {
    const out = tempDir();
    expect(await main(["train", "grpo", "--world", "tomi", "--out", out])).toBe(2);
    expect(io.err).toContain("--model DIR is required");
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--bench", "tomi", "--data", "x", "--out", out])).toBe(2);
    expect(io.err).toContain("give exactly one of --world NAME and --bench NAME --data FILE");
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--out", out, "--reward", "exact=1,bleu=2"])).toBe(2);
    expect(io.err).toContain('--reward: expected NAME=WEIGHT pairs (exact, f1, rougeL, format, trace), got "bleu=2"');
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--out", out, "--loss-agg", "sum"])).toBe(2);
    expect(io.err).toContain("--loss-agg");
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--out", out, "--advantage", "ppo"])).toBe(2);
    expect(io.err).toContain("--advantage");
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--out", out, "--balance", "story"])).toBe(2);
    expect(io.err).toContain("--balance");
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--out", out, "--prompts", "8", "--mini-batch", "3"])).toBe(2);
    expect(io.err).toContain("miniBatch: prompts must be a multiple of miniBatch");
    expect(await main(["train", "grpo", "--model", out, "--bench", "tomi", "--data", join(out, "missing.txt"), "--out", out])).toBe(2);
    expect(io.err).toMatch(/bad input: .*missing\.txt/);
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--out", out, "--keep-solved", "0.3"])).toBe(2);
    expect(io.err).toContain("--keep-solved goes with --skip-solved");
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--out", out, "--keep-solved-type", "reality=1"])).toBe(2);
    expect(io.err).toContain("--keep-solved-type goes with --skip-solved");
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--out", out, "--skip-solved", "--keep-solved-type", "reality=1,memory=2"])).toBe(2);
    expect(io.err).toContain('--keep-solved-type: expected TYPE=SHARE pairs, each share in [0, 1], got "memory=2"');
    expect(await main(["train", "grpo", "--model", out, "--world", "tomi", "--out", out, "--skip-solved", "--keep-solved-type", "reality=1,reality=0"])).toBe(2);
    expect(io.err).toContain("--keep-solved-type: reality is given twice");
    // A name that is no type of the data would keep nothing of its own: refused before any work.
    const data = await tomiFile(12);
    const typo = ["train", "grpo", "--model", out, "--bench", "tomi", "--data", data, "--out", out, "--store", tempDir(), "--skip-solved", "--keep-solved-type"];
    expect(await main([...typo, "reality=1,first_order=0,__proto__=1"])).toBe(2);
    expect(io.err).toMatch(/--keep-solved-type: first_order, __proto__ are not question types of ToMi .*gen\.txt .*; its types: .*memory, reality/);
    expect(await main(["train", "rlhf"])).toBe(2);
    expect(io.err).toContain('expected "sft" or "grpo"');
  });

  it("refuses level credit and per-level generation on answers without levels before a run exists", async () => {
    const data = await tomiFile(6);
    const store = tempDir("sw-grpo-store-");
    const args = ["train", "grpo", "--model", tempDir(), "--bench", "tomi", "--data", data, "--out", join(tempDir(), "out"), "--store", store, "--quiet"];
    expect(await main([...args, "--credit", "level"])).toBe(2);
    expect(io.err).toContain("--credit level: ToMi");
    expect(io.err).toContain("has no answers written in levels (usersim's hierarchy)");
    expect(await main([...args, "--generation", "per-level"])).toBe(2);
    expect(io.err).toContain("--generation per-level: ToMi");
    expect((await RunStore.open(store)).list()).toHaveLength(0);
  });

  it("stops when no prompt of the first step fits the model, instead of training on nothing", async () => {
    // Simulation mode's prompts (a socialized context) and 500 new tokens are longer than tiny's 512 positions.
    const { dir: model } = await tinyCheckpoint(3);
    const data = await tomiFile(6);
    const out = tempDir("sw-grpo-out-");
    const store = tempDir("sw-grpo-store-");
    const args = ["train", "grpo", "--model", model, "--bench", "tomi", "--data", data, "--mode", "simulation", "--out", out, "--store", store, "--prompts", "2", "--group-size", "2", "--steps", "2", "--max-new-tokens", "500", "--quiet"];
    expect(await main(args)).toBe(2);
    expect(io.err).toMatch(/every decision point of step 1 \(2\) is too long for the model: prompt \+ 500 new tokens exceed its max_position_embeddings \(512\)/);
    expect(existsSync(join(out, "metrics.jsonl")) ? readFileSync(join(out, "metrics.jsonl"), "utf8") : "").toBe("");
    const [run] = (await RunStore.open(store)).list();
    expect(run?.status).toBe("failed");
  });
});
