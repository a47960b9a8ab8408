import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { loadCheckpoint } from "../../models/checkpoint.js";
import { setModelDevice } from "../../models/model.js";
import { loadNative } from "../../models/native.js";
import { main } from "../../cli/main.js";
import { tempDir } from "./fixtures.js";

const io = captureOutput();

describe("socialworld model", () => {
  it("init writes a seeded checkpoint (same seed, same bytes); logits prints ids and last-position logits; export-onnx writes the ONNX folder", async () => {
    const a = join(tempDir(), "a");
    const b = join(tempDir(), "b");
    expect(await main(["model", "init", "--preset", "tiny", "--out", a, "--seed", "9"])).toBe(0);
    expect(io.out).toMatch(/wrote .*: preset tiny, [\d.]+k parameters, vocabulary \d+, 2 layers x 64 \(4 heads, 2 kv heads\), seed 9/);
    expect(await main(["model", "init", "--preset", "tiny", "--out", b, "--seed", "9"])).toBe(0);
    for (const f of ["model.safetensors", "tokenizer.json", "config.json"]) expect(readFileSync(join(b, f))).toEqual(readFileSync(join(a, f)));

    io.out = "";
    expect(await main(["model", "logits", a, "--text", "Where is the spinach?", "--json"])).toBe(0);
    const printed = JSON.parse(io.out) as { ids: number[]; logits: number[] };
    const ck = loadCheckpoint(a);
    expect(printed.ids).toEqual(ck.tokenizer.encode("Where is the spinach?"));
    expect(printed.logits).toEqual(Array.from(ck.model.lastLogits(printed.ids)));
    expect(printed.logits).toHaveLength(ck.model.vocabSize);

    io.out = "";
    expect(await main(["model", "logits", a, "--text", "Where is"])).toBe(0);
    expect(io.out).toContain("next-token distribution (top 10)");

    io.out = "";
    expect(await main(["model", "generate", a, "--prompt", "Where is", "--max-new-tokens", "5", "--temperature", "0.8", "--seed", "2"])).toBe(0);
    expect(io.err).toMatch(/\(5 tokens, length, log-prob -[\d.]+\)/);

    io.out = "";
    expect(await main(["model", "export-onnx", a])).toBe(0);
    expect(io.out).toMatch(/wrote .*onnx\/model\.onnx \([\d.]+ MB, opset 17\)/);
    expect(existsSync(join(a, "onnx", "model.onnx"))).toBe(true);
  });

  it("explains usage errors and bad checkpoints", async () => {
    expect(await main(["model", "init", "--preset", "huge", "--out", tempDir()])).toBe(2);
    expect(io.err).toContain("--preset: expected one of tiny, 10m");
    expect(await main(["model", "frobnicate"])).toBe(2);
    expect(io.err).toContain('unknown subcommand "frobnicate"');
    expect(await main(["model", "logits", tempDir(), "--text", "x"])).toBe(2);
    expect(io.err).toMatch(/bad input: .*config\.json: missing/);
    const dir = join(tempDir(), "m");
    expect(await main(["model", "init", "--preset", "tiny", "--out", dir])).toBe(0);
    expect(await main(["model", "init", "--preset", "tiny", "--out", dir])).toBe(2);
    expect(io.err).toContain("is not empty (use --force to overwrite)");
  });

  it("--device: auto runs where there is no GPU (on the CPU), cuda says why it cannot run, --precision is for the GPU", async () => {
    const dir = join(tempDir(), "d");
    expect(await main(["model", "init", "--preset", "tiny", "--out", dir])).toBe(0);
    const gen = (...extra: string[]) => main(["model", "generate", dir, "--prompt", "Where is", "--max-new-tokens", "3", ...extra]);
    try {
      expect(await gen("--device", "auto")).toBe(0);
      expect(io.err).toMatch(/\(3 tokens, length/);
      const status = loadNative().cuda();
      if (!status.available) {
        expect(await gen("--device", "cuda")).toBe(2);
        expect(io.err).toContain(`--device cuda: the cuda device is not available: ${status.reason}`);
      }
      expect(await gen("--precision", "bf16")).toBe(2);
      expect(io.err).toContain("precision bf16 is for the cuda device");
      expect(await gen("--device", "tpu")).toBe(2);
      expect(io.err).toContain("--device:");
    } finally {
      setModelDevice("cpu");
    }
  });
});
