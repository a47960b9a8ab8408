import { describe, expect, it } from "vitest";
import { NativeCompleter } from "../../models/generate.js";
import { sampleToken } from "../../models/sampler.js";
import { Rng } from "../../worlds/core/rng.js";
import { tinyModel } from "./fixtures.js";

const logSoftmax = (z: ArrayLike<number>, t: number, temp = 1) => {
  const s = Array.from(z, (v) => v / temp);
  const m = Math.max(...s);
  return s[t]! - m - Math.log(s.reduce((a, v) => a + Math.exp(v - m), 0));
};

describe("sampling with the native engine", () => {
  it("is seeded: same seed same tokens, other seeds other tokens; each prompt's tokens do not depend on the batch", async () => {
    const m = await tinyModel(21);
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const prompts = ["Where is the spinach?", "Liam likes"];
    const s = { maxNewTokens: 16, temperature: 1.2, seed: 5 };
    const a = await c.complete(prompts, s);
    const b = await c.complete(prompts, s);
    expect(b).toEqual(a);
    const other = await c.complete(prompts, { ...s, seed: 6 });
    expect(other.map((x) => x.tokens)).not.toEqual(a.map((x) => x.tokens));
    const alone = await c.complete([prompts[1]!], s, [6]);
    expect(alone[0]!.tokens).toEqual(a[1]!.tokens);
  });

  it("returns each sampled token's log-prob under the tempered distribution", async () => {
    const m = await tinyModel(22);
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const prompt = m.tokenizer.encode("Ella entered the garage.");
    const [r] = await c.complete([prompt], { maxNewTokens: 6, temperature: 0.7, seed: 3 });
    const seq = [...prompt];
    r!.tokens.forEach((tok, k) => {
      const logits = m.model.lastLogits(seq);
      expect(r!.logprobs[k]).toBeCloseTo(logSoftmax(logits, tok, 0.7), 4);
      seq.push(tok);
    });
  });

  it("top-k 1 is greedy, and top-k / top-p keep to their candidates", async () => {
    const m = await tinyModel(23);
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const greedy = await c.complete(["Mia likes"], { maxNewTokens: 8, temperature: 0 });
    const k1 = await c.complete(["Mia likes"], { maxNewTokens: 8, temperature: 1.5, topK: 1, seed: 9 });
    expect(k1[0]!.tokens).toEqual(greedy[0]!.tokens);
    const ids = m.tokenizer.encode("Mia likes");
    const logits = Array.from(m.model.lastLogits(ids));
    const order = logits.map((v, i) => [v, i] as const).sort((x, y) => y[0] - x[0]).map((x) => x[1]);
    const firsts = new Set<number>();
    const seeds = Array.from({ length: 60 }, (_, i) => i);
    for (const r of await c.complete(seeds.map(() => ids), { maxNewTokens: 1, temperature: 2, topK: 3 }, seeds)) firsts.add(r.tokens[0]!);
    expect([...firsts].every((t) => order.slice(0, 3).includes(t))).toBe(true);
    expect(firsts.size).toBeGreaterThan(1);
    // top-p: the smallest set of best tokens holding p of the probability.
    const probs = logits.map((v) => Math.exp(v - Math.max(...logits)));
    const z = probs.reduce((a, b) => a + b, 0);
    let cum = 0;
    const nucleus: number[] = [];
    for (const t of order) {
      nucleus.push(t);
      cum += probs[t]! / z;
      if (cum >= 0.05) break;
    }
    for (const r of await c.complete(seeds.map(() => ids), { maxNewTokens: 1, temperature: 1, topP: 0.05 }, seeds)) expect(nucleus).toContain(r.tokens[0]);
  });

  it("samples in proportion to the tempered probabilities", async () => {
    const m = await tinyModel(24);
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const ids = m.tokenizer.encode("The");
    const logits = Array.from(m.model.lastLogits(ids));
    const n = 3000;
    const seeds = Array.from({ length: n }, (_, i) => 1000 + i);
    const counts = new Map<number, number>();
    for (const r of await c.complete(seeds.map(() => ids), { maxNewTokens: 1, temperature: 0.25 }, seeds)) counts.set(r.tokens[0]!, (counts.get(r.tokens[0]!) ?? 0) + 1);
    const best = logits.indexOf(Math.max(...logits));
    const p = Math.exp(logSoftmax(logits, best, 0.25));
    // Within 4 standard deviations of the binomial.
    expect(Math.abs((counts.get(best) ?? 0) - n * p)).toBeLessThan(4 * Math.sqrt(n * p * (1 - p)) + 1);
  });

  it("ends at stop strings (text cut before them) and at the end-of-turn token (text without it)", async () => {
    const m = await tinyModel(25);
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const [free] = await c.complete(["Where is"], { maxNewTokens: 24, temperature: 0 });
    expect(free!.finishReason).toBe("length");
    const text = m.tokenizer.decode(free!.tokens);
    const stop = text.slice(6, 8);
    const [cut] = await c.complete(["Where is"], { maxNewTokens: 24, temperature: 0, stop: [stop] });
    expect(cut!.finishReason).toBe("stop_string");
    expect(cut!.text).toBe(text.slice(0, text.indexOf(stop)));
    expect(m.tokenizer.decode(cut!.tokens)).toContain(stop);
    expect(cut!.tokens).toEqual(free!.tokens.slice(0, cut!.tokens.length));
    const endOfTurn = m.tokenizer.stopTokenIds[0]!;
    const [eot] = await c.complete(["Where is"], { maxNewTokens: 24, temperature: 0, stopTokenIds: [free!.tokens[3]!] });
    expect(eot!.finishReason).toBe("stop_token");
    expect(eot!.tokens).toEqual(free!.tokens.slice(0, free!.tokens.indexOf(free!.tokens[3]!) + 1));
    expect(eot!.text).toBe(m.tokenizer.decode(eot!.tokens.slice(0, -1)));
    expect(m.tokenizer.stopTokenIds).toContain(endOfTurn);
  });

  it("batches concurrent requests into one generation with the same results", async () => {
    const m = await tinyModel(26);
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const s = { maxNewTokens: 10, temperature: 0.9 };
    const sequential: number[][] = [];
    for (let i = 0; i < 4; i++) sequential.push([...(await c.complete(["Noah found"], s, [i]))[0]!.tokens]);
    const concurrent = await Promise.all([0, 1, 2, 3].map(async (i) => [...(await c.complete(["Noah found"], s, [i]))[0]!.tokens]));
    expect(concurrent).toEqual(sequential);
  });
});

describe("the TypeScript sampler (ONNX runner)", () => {
  it("follows the same rules: greedy, top-k, log-prob at the temperature", () => {
    const logits = [0.1, 2.0, -1.0, 1.5, 0.3];
    const g = sampleToken(logits, { temperature: 0, topK: 0, topP: 1 }, Rng.seeded(1));
    expect(g.token).toBe(1);
    expect(g.logprob).toBeCloseTo(logSoftmax(logits, 1), 12);
    const rng = Rng.seeded(2);
    for (let i = 0; i < 50; i++) {
      const r = sampleToken(logits, { temperature: 1.3, topK: 2, topP: 1 }, rng);
      expect([1, 3]).toContain(r.token);
      expect(r.logprob).toBeCloseTo(logSoftmax(logits, r.token, 1.3), 12);
    }
  });
});
