import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureOutput } from "../capture.js";
import { main } from "../../cli/main.js";
import { encodeExamples, makeBatch, type EncodedExample } from "../../trainers/sft/batches.js";
import { jsonFieldSpans } from "../../trainers/sft/field-spans.js";
import { tempDir, tinyModel } from "../policy/fixtures.js";

const io = captureOutput();

describe("jsonFieldSpans", () => {
  it("finds a top-level field's value: inside the quotes for a string, whole otherwise", () => {
    const text = ' {"note": "a \\"quoted\\" } brace", "nested": {"action": "x", "list": [1, "]"]}, "action" : "repost", "n": -2.5e3 } ';
    const spans = jsonFieldSpans(text, ["action", "nested", "n", "missing"])!;
    const at = (k: string) => text.slice(spans.get(k)!.start, spans.get(k)!.end);
    expect(at("action")).toBe("repost"); // the top level's, not the nested object's
    expect(at("nested")).toBe('{"action": "x", "list": [1, "]"]}');
    expect(at("n")).toBe("-2.5e3");
    expect(spans.has("missing")).toBe(false);
  });

  it("is undefined for a text that is not one JSON object", () => {
    expect(jsonFieldSpans("yes", ["action"])).toBeUndefined();
    expect(jsonFieldSpans('["action"]', ["action"])).toBeUndefined();
    expect(jsonFieldSpans('{"action": "like"} and more', ["action"])).toBeUndefined();
  });
});

describe("SFT --field-weight", () => {
  const reply = '{"action":"repost","target":"p0","content":"Worth reading."}';
  const messages = [{ role: "user" as const, content: "What do you do with [p0]?" }, { role: "assistant" as const, content: reply }];

  it("weighs the tokens of the field's value, and only those", async () => {
    const m = await tinyModel(41);
    const [plain] = encodeExamples(m.tokenizer, [{ messages, line: 1 }], 256).examples;
    const [ex] = encodeExamples(m.tokenizer, [{ messages, line: 1 }], 256, { fieldWeights: { action: 5 } }).examples;
    const weighted = [...ex!.weights.keys()].filter((i) => ex!.weights[i] === 5);
    expect(weighted.length).toBeGreaterThan(0);
    // The weighted targets spell the value (with at most the edges of the tokens it shares).
    const text = m.tokenizer.decode(weighted.map((i) => ex!.targets[i]!));
    expect(text).toContain("repost");
    expect(text.replace(/[",:]/g, "")).toBe("repost");
    // Every other trained token keeps its 1; the targets are the same tokens.
    for (let i = 0; i < ex!.weights.length; i++) if (!weighted.includes(i)) expect(ex!.weights[i]).toBe(plain!.weights[i]);
    expect(Array.from(ex!.targets)).toEqual(Array.from(plain!.targets));
    expect(ex!.trained).toBe(plain!.trained + 4 * weighted.length);
  });

  it("reaches the loss: the weighted token's gradient is scaled by its weight", async () => {
    const m = await tinyModel(42);
    const W = 4;
    const [plain] = encodeExamples(m.tokenizer, [{ messages, line: 1 }], 256).examples;
    const [ex] = encodeExamples(m.tokenizer, [{ messages, line: 1 }], 256, { fieldWeights: { action: W } }).examples;
    // The field's tokens alone at weight 1.
    const fieldOnly: EncodedExample = { ...ex!, weights: ex!.weights.map((w) => (w === W ? 1 : 0)), targets: ex!.targets.map((t, i) => (ex!.weights[i] === W ? t : -1)) };
    const grads = async (e: EncodedExample) => {
      m.model.trained.zeroGrad();
      await m.model.pass(makeBatch([e], 1), true);
      return Float64Array.from(m.model.trained.native.readGrads());
    };
    const [g, g1, gField] = [await grads(ex!), await grads(plain!), await grads(fieldOnly)];
    // Gradients are linear in the weights: g - g1 = (W - 1) * gField.
    let diff = 0;
    let scale = 0;
    for (let i = 0; i < g.length; i++) {
      diff = Math.max(diff, Math.abs(g[i]! - g1[i]! - (W - 1) * gField[i]!));
      scale = Math.max(scale, Math.abs((W - 1) * gField[i]!));
    }
    expect(scale).toBeGreaterThan(1e-4);
    expect(diff / scale).toBeLessThan(1e-3);
  });

  it("train sft --field-weight: trains, notes the responses without the field, and names a bad value", async () => {
    const dir = tempDir();
    const file = join(dir, "pairs.jsonl");
    writeFileSync(file, [{ prompt: "Q?", response: reply }, { prompt: "R?", response: "not json" }].map((p) => JSON.stringify(p)).join("\n") + "\n");
    const args = ["train", "sft", "--init", "tiny", "--data", file, "--steps", "2", "--batch", "2", "--quiet"];
    expect(await main([...args, "--out", join(dir, "a"), "--field-weight", "action=20"]), io.err).toBe(0);
    expect(io.err).toContain("--field-weight: 1 response(s) are not a JSON object with any of the fields action");
    expect(await main([...args, "--out", join(dir, "b"), "--field-weight", "action=x"])).toBe(2);
    expect(io.err).toContain('--field-weight: expected FIELD=WEIGHT pairs with weights of 0 or more (action=20), got "action=x"');
  });
});
