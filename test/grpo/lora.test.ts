/**
 * `train grpo --lora`: the adapter alone is trained and checkpointed (PEFT's layout), the KL's
 * reference is the base model itself (no copy in OUT/reference/; the first step's KL is 0, as a
 * new adapter changes nothing), and a resumed run continues exactly.
 */
import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { listCheckpoints } from "../../trainers/common/checkpoint-folders.js";
import { pretrainedCheckpoint, tempDir } from "../policy/fixtures.js";

const io = captureOutput();

describe("train grpo --lora", () => {
  it("trains the adapter against the base as reference, and resumes exactly", async () => {
    const { dir: model } = await pretrainedCheckpoint(9);
    const baseBytes = readFileSync(join(model, "model.safetensors"));
    const args = (out: string) => ["train", "grpo", "--model", model, "--lora", "r=4,alpha=8,dropout=0.1", "--world", "tomi", "--episodes", "2", "--out", out, "--store", tempDir("sw-grpo-store-"),
      "--steps", "3", "--prompts", "2", "--group-size", "3", "--max-new-tokens", "16", "--temperature", "1.5", "--lr", "5e-3", "--kl", "0.05", "--entropy", "0.05", "--save-every", "1", "--keep", "5", "--quiet"];
    const whole = tempDir("sw-grpo-lora-");
    expect(await main(args(whole)), io.err).toBe(0);
    expect(io.err).toMatch(/LoRA r=4 alpha=8 dropout=0\.1 on q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj: [\d.]+ k trainable parameters/);
    expect(io.out).toMatch(/LoRA adapter \(PEFT layout\) in /);
    expect(existsSync(join(whole, "adapter_model.safetensors"))).toBe(true);
    expect(existsSync(join(whole, "model.safetensors"))).toBe(false);
    expect(existsSync(join(whole, "reference"))).toBe(false);
    expect(readFileSync(join(model, "model.safetensors"))).toEqual(baseBytes);
    const metrics = (dir: string) => readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { step: number; kl: number; loss: number; gradNorm: number });
    const m = metrics(whole);
    // The untrained policy's rewards are all alike (no advantage): the entropy bonus is what moves
    // the adapter, and the KL to the base then grows from 0.
    expect(m[0]!.kl).toBe(0);
    expect(m.every((x) => x.gradNorm > 0)).toBe(true);
    expect(m.at(-1)!.kl).toBeGreaterThan(0);
    expect(listCheckpoints(whole).map((c) => c.step)).toEqual([1, 2, 3]);

    const resumed = tempDir("sw-grpo-lora-resumed-");
    cpSync(join(whole, "checkpoint-1"), join(resumed, "checkpoint-1"), { recursive: true });
    expect(await main([...args(resumed), "--resume", "auto"]), io.err).toBe(0);
    expect(readFileSync(join(resumed, "adapter_model.safetensors"))).toEqual(readFileSync(join(whole, "adapter_model.safetensors")));
    expect(readFileSync(join(resumed, "checkpoint-3", "optimizer.safetensors"))).toEqual(readFileSync(join(whole, "checkpoint-3", "optimizer.safetensors")));
    expect(metrics(resumed).map((x) => x.loss)).toEqual(m.slice(1).map((x) => x.loss));

    expect(await main(["train", "grpo", "--lora", "r=4", "--resume", "auto", "--world", "tomi", "--out", resumed])).toBe(2);
    expect(io.err).toMatch(/--lora needs --model DIR/);
  });
});
