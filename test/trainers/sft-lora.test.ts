/**
 * `train sft --lora`: only the adapter is trained and saved (PEFT's layout), its trainable count
 * and memory are printed, a resumed run continues exactly, bad settings are refused with their
 * reason, and on a tiny model it learns nearly as full fine-tuning does from the same start.
 */
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { loadCheckpoint } from "../../models/checkpoint.js";
import { loadAdapter } from "../../models/peft-adapter.js";
import { main } from "../../cli/main.js";
import { listCheckpoints } from "../../trainers/common/checkpoint-folders.js";
import { PAIRS, pretrainedCheckpoint, tempDir, tinyCheckpoint } from "../policy/fixtures.js";

const io = captureOutput();

function dataFile(): string {
  const file = join(tempDir("sw-sft-lora-"), "pairs.jsonl");
  writeFileSync(file, PAIRS.map((p) => JSON.stringify(p)).join("\n") + "\n");
  return file;
}

const losses = (dir: string) =>
  readFileSync(join(dir, "train_log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l).loss as number);

describe("train sft --lora", () => {
  it("trains and saves the adapter alone, in PEFT's layout, and prints what it trains", async () => {
    const base = await pretrainedCheckpoint(41);
    const baseBytes = readFileSync(join(base.dir, "model.safetensors"));
    const out = join(tempDir(), "run");
    const args = ["train", "sft", "--model", base.dir, "--data", dataFile(), "--out", out, "--steps", "40", "--lr", "1e-2", "--batch", "6", "--quiet"];
    expect(await main([...args, "--lora", "r=4,alpha=8,dropout=0.05,targets=q_proj,v_proj,down_proj"]), io.err).toBe(0);
    expect(io.err).toMatch(/LoRA r=4 alpha=8 dropout=0\.05 on q_proj, v_proj, down_proj: [\d.]+ k trainable parameters \([\d.]+% of [\d.]+ k\); memory .* frozen base \+ .* adapter weights, gradients and AdamW moments/);
    expect(io.out).toContain("LoRA adapter (PEFT layout)");
    expect(existsSync(join(out, "adapter_config.json"))).toBe(true);
    expect(existsSync(join(out, "adapter_model.safetensors"))).toBe(true);
    expect(existsSync(join(out, "model.safetensors"))).toBe(false);
    const config = JSON.parse(readFileSync(join(out, "adapter_config.json"), "utf8"));
    expect(config).toMatchObject({ peft_type: "LORA", r: 4, lora_alpha: 8, lora_dropout: 0.05, target_modules: ["q_proj", "v_proj", "down_proj"], base_model_name_or_path: base.dir, bias: "none", use_rslora: false });
    // The base checkpoint was not touched; the loss went down.
    expect(readFileSync(join(base.dir, "model.safetensors"))).toEqual(baseBytes);
    const l = losses(out);
    expect(l.at(-1)!).toBeLessThan(l[0]! * 0.6);
    // The adapter loads back onto the base and changes its outputs.
    const ck = loadCheckpoint(base.dir);
    const before = ck.model.lastLogits([1, 2, 3]);
    const { adapter } = loadAdapter(out, ck.model.native, ck.model.engine.numLayers);
    ck.model.useAdapter(adapter);
    const after = ck.model.lastLogits([1, 2, 3]);
    expect(Math.max(...after.map((x, i) => Math.abs(x - before[i]!)))).toBeGreaterThan(1e-3);
  });

  it("resumes exactly: the same adapter, moments and losses as the uninterrupted run", async () => {
    const base = await tinyCheckpoint(42);
    const file = dataFile();
    const whole = join(tempDir(), "whole");
    const args = ["train", "sft", "--model", base.dir, "--lora", "r=2,alpha=4,dropout=0.1", "--data", file, "--steps", "24", "--lr", "5e-3", "--batch", "3", "--grad-accum", "2", "--save-every", "8", "--keep", "5", "--seed", "7", "--quiet"];
    expect(await main([...args, "--out", whole]), io.err).toBe(0);
    expect(listCheckpoints(whole).map((c) => c.step)).toEqual([8, 16, 24]);
    expect(existsSync(join(whole, "checkpoint-8", "adapter_model.safetensors"))).toBe(true);
    expect(existsSync(join(whole, "checkpoint-8", "model.safetensors"))).toBe(false);
    const resumed = join(tempDir(), "resumed");
    cpSync(join(whole, "checkpoint-8"), join(resumed, "checkpoint-8"), { recursive: true });
    expect(await main([...args, "--out", resumed, "--resume", "auto"]), io.err).toBe(0);
    expect(io.err).toContain("resuming from");
    expect(readFileSync(join(resumed, "adapter_model.safetensors"))).toEqual(readFileSync(join(whole, "adapter_model.safetensors")));
    expect(readFileSync(join(resumed, "checkpoint-24", "optimizer.safetensors"))).toEqual(readFileSync(join(whole, "checkpoint-24", "optimizer.safetensors")));
    expect(losses(resumed).slice(-16)).toEqual(losses(whole).slice(-16));
    // Other LoRA settings, or none, are refused.
    expect(await main([...args.map((x) => (x === "r=2,alpha=4,dropout=0.1" ? "r=2,alpha=8,dropout=0.1" : x)), "--out", resumed, "--resume", join(whole, "checkpoint-16")])).toBe(2);
    // The one setting that differs, not the adapter's settings quoted whole twice.
    expect(io.err).toMatch(/was trained with lora\.\S*alpha=4, not 8; resume with/);
    expect(io.err).not.toContain("start a new run with --model");
    const withoutLora = args.filter((x, i) => x !== "--lora" && args[i - 1] !== "--lora");
    expect(await main([...withoutLora, "--out", resumed, "--resume", join(whole, "checkpoint-16")])).toBe(2);
    expect(io.err).toMatch(/was trained with --lora: resume with the same --lora and --model/);
  });

  it("refuses --lora without a base model, and bad LoRA settings, naming them", async () => {
    const file = dataFile();
    expect(await main(["train", "sft", "--init", "tiny", "--lora", "r=4", "--data", file, "--out", tempDir()])).toBe(2);
    expect(io.err).toMatch(/--lora adapts an existing model: give --model DIR/);
    const base = await tinyCheckpoint(43);
    for (const [spec, why] of [
      ["r=0", /--lora: r: .*>=1/],
      ["r=4,alpha=x", /--lora: alpha must be a number/],
      ["dropout=1", /--lora: dropout: .*<1/],
      ["targets=lm_head", /--lora: unknown LoRA target "lm_head"/],
      ["rank=4", /--lora: unknown key "rank"/],
    ] as const) {
      expect(await main(["train", "sft", "--model", base.dir, "--lora", spec, "--data", file, "--out", tempDir()])).toBe(2);
      expect(io.err).toMatch(why);
    }
  });

  it("learns nearly as much as full fine-tuning from the same start, on the same data and steps", async () => {
    const base = await pretrainedCheckpoint(44);
    const file = dataFile();
    const common = ["train", "sft", "--model", base.dir, "--data", file, "--steps", "60", "--batch", "6", "--seed", "3", "--quiet"];
    const full = join(tempDir(), "full");
    const lora = join(tempDir(), "lora");
    expect(await main([...common, "--lr", "3e-3", "--out", full]), io.err).toBe(0);
    expect(await main([...common, "--lr", "1e-2", "--lora", "r=8,alpha=16,dropout=0", "--out", lora]), io.err).toBe(0);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const [f, l] = [losses(full), losses(lora)];
    // The same start; the adapter (a fraction of the parameters, the embeddings and the LM head
    // frozen) takes most of full fine-tuning's loss reduction.
    expect(l[0]).toBeCloseTo(f[0]!, 5);
    const end = (xs: number[]) => mean(xs.slice(-5));
    expect(l[0]! - end(l)).toBeGreaterThan(0.6 * (f[0]! - end(f)));
    expect(end(l)).toBeLessThan(0.4 * l[0]!);
  });
});
