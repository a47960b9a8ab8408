/**
 * Parity with Hugging Face transformers, the reference implementation of Qwen2: the checkpoint in
 * test/fixtures/hf-qwen2/ was written by transformers 5.17 itself (Qwen2ForCausalLM.save_pretrained:
 * untied head, 3 layers, 6 query heads over 2 key/value heads, q/k/v biases, rope_theta 1e6 in
 * transformers 5's `rope_parameters`), and hf-qwen2-logits.json holds the logits transformers
 * computed for it (torch 2.11, float32). test/fixtures/hf-qwen2.py is the script that made both
 * (run on the GPU machine, where Python and transformers are installed; it also checked the other
 * direction: transformers loads a checkpoint of ours and gives our logits, max abs diff 2e-7).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadCheckpoint } from "../../models/checkpoint.js";

const dir = new URL("../fixtures/hf-qwen2", import.meta.url).pathname;
const reference = JSON.parse(readFileSync(new URL("../fixtures/hf-qwen2-logits.json", import.meta.url), "utf8")) as { ids: number[]; logits: number[] };

describe("a checkpoint written by Hugging Face transformers", () => {
  it("loads and gives transformers' logits (to 1e-5 of their scale)", () => {
    const ck = loadCheckpoint(dir);
    expect(ck.tokenizer.encode("Where will Ella look for the spinach?")).toEqual(reference.ids);
    const ours = Array.from(ck.model.lastLogits(reference.ids));
    expect(ours).toHaveLength(reference.logits.length);
    const scale = Math.max(...reference.logits.map(Math.abs));
    const worst = Math.max(...ours.map((x, i) => Math.abs(x - reference.logits[i]!)));
    expect(scale).toBeGreaterThan(1);
    expect(worst / scale).toBeLessThan(1e-5);
  });
});
