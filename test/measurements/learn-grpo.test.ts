/**
 * The learning recipe's GRPO stage (measurements/learn-grpo.ts, `npm run demo:learn`): ToMi's
 * stage trains in vanilla mode on the first questions of the recipe's file, each type in equal
 * shares, answers among the story's containers, what SFT solves left out but for a share; and run
 * as `train grpo`, it asks exactly the vanilla prompts that SFT trained on, and no other. (The
 * equal shares themselves are point-order's, tested with it.)
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { RECIPE_GRPO_QUESTIONS, RECIPE_GRPO_SETTINGS, RECIPE_GRPO_STEPS, recipeGrpoArgs, recipeGrpoMode } from "../../measurements/learn-grpo.js";
import { keptStage, stageRecord } from "../../measurements/stage-record.js";
import { recipeSftData } from "../../measurements/learn-recipe.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { createFromScratch } from "../../models/from-scratch.js";
import { readEpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { tempDir } from "../policy/fixtures.js";

const io = captureOutput();

/** The value after `flag` in `args` (undefined when the flag is absent). */
function flag(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? undefined : args[i + 1];
}

const common = { model: "/m/sft", out: "/m/grpo", store: "/m/store", seed: 1 };

describe("the learning recipe's GRPO stage", () => {
  it("trains ToMi in vanilla mode when the recipe trains vanilla mode, else in simulation mode", () => {
    expect(recipeGrpoMode("tomi", 0.5)).toBe("vanilla");
    expect(recipeGrpoMode("tomi", 0)).toBe("simulation");
    expect(recipeGrpoMode("hitom", 0)).toBe("simulation");
    expect(RECIPE_GRPO_STEPS.vanilla).toBeGreaterThan(RECIPE_GRPO_STEPS.simulation);
  });

  it("builds vanilla mode's command: the file's first questions, every type in equal shares, the story's containers, a share of the solved kept", () => {
    const args = recipeGrpoArgs({ ...common, world: "tomi", trainFile: "/m/train.txt", mode: "vanilla", steps: 40 });
    expect(args.slice(0, 2)).toEqual(["train", "grpo"]);
    expect(flag(args, "mode")).toBe("vanilla");
    expect(flag(args, "bench")).toBe("tomi");
    expect(flag(args, "data")).toBe("/m/train.txt");
    expect(flag(args, "limit")).toBe(String(RECIPE_GRPO_QUESTIONS));
    expect(flag(args, "balance")).toBe("type");
    expect(flag(args, "constrain")).toBe("options");
    expect(flag(args, "steps")).toBe("40");
    expect(args).toContain("--skip-solved");
    expect(Number(flag(args, "keep-solved"))).toBeGreaterThan(0);
    expect(Number(flag(args, "kl"))).toBeGreaterThan(0);
    // A stage trained again in OUT starts afresh, without an earlier run's checkpoints beside its own.
    expect(flag(args, "resume")).toBe("off");
    for (const [name, value] of Object.entries(RECIPE_GRPO_SETTINGS.vanilla)) expect(flag(args, name), name).toBe(value);
    // Each flag once: a setting given twice would leave the parser the last.
    const flags = args.filter((a) => a.startsWith("--"));
    expect(new Set(flags).size).toBe(flags.length);
    // --grpo-questions and the device go through.
    const more = recipeGrpoArgs({ ...common, world: "tomi", trainFile: "/m/train.txt", mode: "vanilla", steps: 5, questions: 300, device: ["--device", "cuda"] });
    expect(flag(more, "limit")).toBe("300");
    expect(flag(more, "device")).toBe("cuda");
  });

  it("keeps simulation mode's command (Hi-ToM's): every question of the file, no type balance", () => {
    const args = recipeGrpoArgs({ ...common, world: "hitom", trainFile: "/m/train.json", mode: "simulation", steps: 10 });
    expect(flag(args, "mode")).toBe("simulation");
    expect(flag(args, "bench")).toBe("hitom");
    expect(flag(args, "limit")).toBeUndefined();
    expect(flag(args, "balance")).toBeUndefined();
    expect(flag(args, "lr")).toBe("3e-5");
    expect(args).toContain("--skip-solved");
  });

  it("asks simulation mode's GRPO the prompt the policy writes its own context in, where the recipe's --context says so", () => {
    for (const context of ["self", "self-latest"] as const) {
      const args = recipeGrpoArgs({ ...common, world: "tomi", trainFile: "/m/train.txt", mode: "simulation", steps: 10, context });
      expect(flag(args, "context")).toBe(context);
      // The trace and the answer line, not the answer alone.
      expect(flag(args, "max-new-tokens")).toBe("256");
      const flags = args.filter((a) => a.startsWith("--"));
      expect(new Set(flags).size).toBe(flags.length);
    }
    // The world model's context, and vanilla mode (no context to write): as before.
    for (const [mode, context] of [["simulation", "world"], ["vanilla", "self"], ["vanilla", "self-latest"]] as const) {
      const args = recipeGrpoArgs({ ...common, world: "tomi", trainFile: "/m/train.txt", mode, steps: 10, context });
      expect(args).toEqual(recipeGrpoArgs({ ...common, world: "tomi", trainFile: "/m/train.txt", mode, steps: 10 }));
      expect(flag(args, "max-new-tokens")).toBe("16");
    }
  });

  it("run as `train grpo`, asks only the vanilla prompts SFT trained on, among the story's containers", async () => {
    const out = tempDir("sw-learn-grpo-");
    // The recipe's data in both modes: every question in simulation mode, every one also in vanilla (share 1).
    const data = await recipeSftData(out, { questions: 60, seed: 5, modes: ["simulation", "vanilla"], balance: true, timings: [] });
    const examples = readFileSync(data.sftFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { prompt: string; response: string });
    const vanilla = new Map(examples.filter((e) => e.prompt.includes("\nStory:\n")).map((e) => [e.prompt, e.response]));
    expect(vanilla.size).toBe(60);
    const m = await createFromScratch({ preset: "1m", seed: 5, corpus: examples.map((e) => `${e.prompt} ${e.response}`) });
    const model = tempDir("sw-learn-grpo-model-");
    saveCheckpoint(model, m.model, m.files);
    const store = join(out, "store");
    const args = recipeGrpoArgs({ world: "tomi", model, out: join(out, "grpo"), trainFile: data.trainFile, store, mode: "vanilla", steps: 1, seed: 1, questions: 24 });
    // A smaller batch for the test (the flags given last win); everything else as the demo runs it.
    expect(await main([...args, "--prompts", "6", "--group-size", "2", "--quiet"])).toBe(0);
    expect(io.out).toMatch(/trained 1 GRPO steps on ToMi .*train\.txt \(vanilla mode, 24 questions\)/);
    const runId = /rollouts in run (\S+)/.exec(io.out)![1]!;
    const s = await RunStore.open(store);
    type Rec = { mode: string; result: { type: string }; turns: { observation: string; raw: string }[] };
    const recs = readEpisodeLog<Rec>(s.episodesPath(s.get(runId)!)).records;
    expect(recs.length).toBeGreaterThan(0);
    for (const r of recs) {
      expect(r.mode).toBe("vanilla");
      // The prompt is one SFT trained on in vanilla mode; no compact context.
      expect(vanilla.has(r.turns[0]!.observation)).toBe(true);
      expect(r.turns[0]!.observation).not.toContain("Where each object was first");
      // Sampled among the story's containers: every reply is a word of its story.
      const story = r.turns[0]!.observation.split("\nQuestion:")[0]!;
      expect(story.split(/[\s.]+/)).toContain(r.turns[0]!.raw.trim());
    }
  });

  it("run as `train grpo` where the policy writes its own context, asks the prompts SFT trained on", async () => {
    const out = tempDir("sw-learn-grpo-self-");
    const data = await recipeSftData(out, { questions: 60, seed: 5, modes: ["simulation"], context: "self-latest", balance: true, timings: [] });
    const examples = readFileSync(data.sftFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { prompt: string; response: string });
    const prompts = new Set(examples.map((e) => e.prompt));
    const m = await createFromScratch({ preset: "tiny", seed: 5, corpus: examples.map((e) => `${e.prompt} ${e.response}`) });
    const model = tempDir("sw-learn-grpo-self-model-");
    saveCheckpoint(model, m.model, m.files);
    const store = join(out, "store");
    const args = recipeGrpoArgs({ world: "tomi", model, out: join(out, "grpo"), trainFile: data.trainFile, store, mode: "simulation", steps: 1, seed: 1, questions: 8, context: "self-latest" });
    expect(await main([...args, "--prompts", "4", "--group-size", "2", "--quiet"])).toBe(0);
    const runId = /rollouts in run (\S+)/.exec(io.out)![1]!;
    const s = await RunStore.open(store);
    type Rec = { mode: string; turns: { observation: string }[] };
    const recs = readEpisodeLog<Rec>(s.episodesPath(s.get(runId)!)).records;
    expect(recs.length).toBeGreaterThan(0);
    for (const r of recs) {
      expect(r.mode).toBe("simulation");
      // The latest-first prompt SFT trained on, not the world model's compact context.
      expect(prompts.has(r.turns[0]!.observation), r.turns[0]!.observation).toBe(true);
      expect(r.turns[0]!.observation).toContain("latest first, then the answer:");
    }
  });

  it("--reuse keeps a GRPO policy only where it was trained with the same arguments", () => {
    const dir = join(tempDir("sw-learn-grpo-reuse-"), "grpo");
    const vanilla = recipeGrpoArgs({ ...common, world: "tomi", trainFile: "/m/train.txt", mode: "vanilla", steps: 30 });
    expect(keptStage(dir, vanilla)).toBe("none");
    mkdirSync(dir);
    writeFileSync(join(dir, "model.safetensors"), "");
    // A policy without the record (an interrupted stage, or a demo from before the record) is trained again.
    expect(keptStage(dir, vanilla)).toBe("other");
    writeFileSync(stageRecord(dir), JSON.stringify(vanilla) + "\n");
    expect(keptStage(dir, vanilla)).toBe("kept");
    // The earlier simulation-mode stage leaves the same files: other mode, steps, questions or seed are another policy.
    expect(keptStage(dir, recipeGrpoArgs({ ...common, world: "tomi", trainFile: "/m/train.txt", mode: "simulation", steps: 30 }))).toBe("other");
    expect(keptStage(dir, recipeGrpoArgs({ ...common, world: "tomi", trainFile: "/m/train.txt", mode: "vanilla", steps: 10 }))).toBe("other");
    expect(keptStage(dir, recipeGrpoArgs({ ...common, world: "tomi", trainFile: "/m/train.txt", mode: "vanilla", steps: 30, questions: 6000 }))).toBe("other");
    expect(keptStage(dir, recipeGrpoArgs({ ...common, seed: 2, world: "tomi", trainFile: "/m/train.txt", mode: "vanilla", steps: 30 }))).toBe("other");
  });

  it("learn-demo refuses GRPO in vanilla mode without vanilla-mode training data, before any stage runs", () => {
    const out = tempDir("sw-learn-demo-");
    for (const f of ["val.txt", "para.txt"]) writeFileSync(join(out, f), "");
    const script = resolve(import.meta.dirname, "../../dist/measurements/learn-demo.js");
    const r = spawnSync(process.execPath, [script, "--grpo-mode", "vanilla", "--vanilla-share", "0", "--out", join(out, "run"), "--val", join(out, "val.txt"), "--paraphrased", join(out, "para.txt")], { encoding: "utf8", timeout: 30_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain("--grpo-mode vanilla needs vanilla-mode training data");
    expect(existsSync(join(out, "run", "sft.jsonl"))).toBe(false);
  });
});
