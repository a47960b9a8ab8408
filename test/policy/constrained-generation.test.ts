/**
 * Constrained decoding in the engines: the native engine's Generation and the ONNX runner sample
 * only what the grammar allows; each token's log-prob is under the masked distribution (softmax
 * over the allowed tokens, recomputed here from the model's logits); temperature, top-k and top-p
 * act after the mask; a sequence always finishes a text within its budget; the sequences beside
 * it in a batch are untouched; and the policy agent's replies parse as valid actions.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { actionConstraint, grammarVocabulary } from "../../agents/policy/action-grammar.js";
import { parseAction } from "../../agents/policy/action.js";
import { NativeCompleter } from "../../models/generate.js";
import { loadNative, nativeConstraint } from "../../models/native.js";
import { exportOnnx } from "../../models/onnx/export.js";
import { OnnxCompleter } from "../../models/onnx/session.js";
import { sampleAmong } from "../../models/sampler.js";
import { compileConstraint, type TokenAutomaton } from "../../models/grammar/index.js";
import { Rng } from "../../worlds/core/rng.js";
import { TomiActionSchema } from "../../worlds/tomi/world.js";
import { tinyCheckpoint, tinyModel } from "./fixtures.js";

const ORDER = z.object({ item: z.enum(["apple", "box", "spinach"]), count: z.int().min(1).max(12), note: z.string().max(10) });

/** log softmax over the allowed tokens of logits / temperature, at the grammar's state. */
function maskedLogprob(logits: ArrayLike<number>, allowed: readonly number[], token: number, temp: number): number {
  const z = allowed.map((t) => logits[t]! / temp);
  const m = Math.max(...z);
  const lse = m + Math.log(z.reduce((a, v) => a + Math.exp(v - m), 0));
  return allowed.length === 1 ? 0 : logits[token]! / temp - lse;
}

function allowedAt(a: TokenAutomaton, state: number, remaining: number, stops: readonly number[]): { tokens: number[]; next: number[] } {
  const t = new Int32Array(a.vocabSize + stops.length);
  const n = new Int32Array(a.vocabSize + stops.length);
  const k = a.allowed(state, remaining, t, n, new Set(stops));
  return { tokens: Array.from(t.subarray(0, k)), next: Array.from(n.subarray(0, k)) };
}

describe("the native engine under a grammar", () => {
  it("samples only allowed tokens, reports log-probs under the masked distribution, and finishes within the budget", async () => {
    const m = await tinyModel(31);
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const grammar = compileConstraint({ type: "json_schema", schema: z.toJSONSchema(ORDER) }, grammarVocabulary(m.tokenizer));
    const prompt = m.tokenizer.encode("Where is the spinach?");
    const budget = grammar.minBudget + 6;
    const seeds = Array.from({ length: 24 }, (_, i) => i);
    const out = await c.complete(seeds.map(() => prompt), { maxNewTokens: budget, temperature: 1.3, topK: 50 }, seeds, seeds.map(() => grammar));
    for (const r of out) {
      expect(ORDER.safeParse(JSON.parse(r.text)).success, r.text).toBe(true);
      expect(r.tokens.length).toBeLessThanOrEqual(budget);
      let state = grammar.start;
      const seq = [...prompt];
      r.tokens.forEach((tok, k) => {
        const { tokens, next } = allowedAt(grammar, state, budget - k, m.tokenizer.stopTokenIds);
        const i = tokens.indexOf(tok);
        expect(i, `token ${k} allowed`).toBeGreaterThanOrEqual(0);
        // top-k applies after the mask, so the log-prob is still the masked softmax's.
        expect(r.logprobs[k]).toBeCloseTo(maskedLogprob(m.model.lastLogits(seq), tokens, tok, 1.3), 4);
        state = next[i]!;
        seq.push(tok);
      });
    }
    expect(new Set(out.map((r) => r.text)).size).toBeGreaterThan(5);
  });

  it("leaves the unconstrained sequences of a batch as they are alone, and forces the end when nothing else fits", async () => {
    const m = await tinyModel(32);
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const choice = compileConstraint({ type: "choice", choices: ["box", "basket"] }, grammarVocabulary(m.tokenizer));
    const prompts = ["Where is the spinach?", "Liam likes"];
    const s = { maxNewTokens: 10, temperature: 1, seed: 7 };
    const alone = await c.complete([prompts[1]!], s, [8]);
    const both = await c.complete(prompts, s, [7, 8], [choice, undefined]);
    expect(both[1]!.tokens).toEqual(alone[0]!.tokens);
    expect(["box", "basket"]).toContain(both[0]!.text);
    expect(both[0]!.finishReason).toBe("stop_token");
    // After a whole choice only the stop tokens are allowed: the last is one, its log-prob under them.
    const last = both[0]!.tokens.at(-1)!;
    const stops = [...m.tokenizer.stopTokenIds];
    expect(stops).toContain(last);
    const logits = m.model.lastLogits([...m.tokenizer.encode(prompts[0]!), ...both[0]!.tokens.slice(0, -1)]);
    expect(both[0]!.logprobs.at(-1)).toBeCloseTo(maskedLogprob(logits, stops, last, 1), 4);
  });

  it("refuses a budget the grammar may not fit in, and a grammar compiled for a larger vocabulary", async () => {
    const m = await tinyModel(33);
    const grammar = compileConstraint({ type: "json_schema", schema: z.toJSONSchema(ORDER) }, grammarVocabulary(m.tokenizer));
    const { Generation } = loadNative();
    const prompt = Int32Array.from(m.tokenizer.encode("hi"));
    const opts = { maxNewTokens: 64, stopTokenIds: [...m.tokenizer.stopTokenIds], seeds: [1] };
    expect(() => new Generation(m.model.native, [prompt], { ...opts, constraints: [nativeConstraint(grammar)], budgets: [grammar.minBudget - 1] })).toThrow(
      `constraint 0 needs up to ${grammar.minBudget} tokens to finish, more than its budget of ${grammar.minBudget - 1}`,
    );
    const bigger = compileConstraint({ type: "choice", choices: ["a"] }, new (await import("../../models/grammar/index.js")).Vocabulary({ tokens: [...Array.from({ length: 256 }, (_, b) => [b]), ...Array.from({ length: 2000 }, () => null)], eos: [2100] }));
    expect(() => new Generation(m.model.native, [prompt], { ...opts, constraints: [nativeConstraint(bigger)] })).toThrow(/compiled for 2256 tokens, more than the model's/);
    expect(() => new (loadNative().Constraint)({ ...grammar, entries: grammar.entries.slice(5) } as never)).toThrow(/rowStart does not match the entries/);
  });
});

describe("the ONNX runner under a grammar", () => {
  it("masks as the native engine does: same greedy tokens and log-probs", async () => {
    const ck = await tinyCheckpoint(34);
    exportOnnx(ck.model, ck.dir);
    const onnx = await OnnxCompleter.load(ck.dir, { threads: 1 });
    const native = new NativeCompleter("native", ck.model, ck.tokenizer);
    const grammar = compileConstraint({ type: "json_schema", schema: z.toJSONSchema(TomiActionSchema) }, grammarVocabulary(ck.tokenizer));
    const prompts = ["Where is the spinach?", "Ella moved the spinach"];
    const s = { maxNewTokens: grammar.minBudget + 10, temperature: 0 };
    const n = await native.complete(prompts, s, undefined, [grammar, grammar]);
    const o = await onnx.complete(prompts, s, undefined, [grammar, grammar]);
    expect(o.map((c) => c.tokens)).toEqual(n.map((c) => c.tokens));
    for (let i = 0; i < n.length; i++) {
      expect(TomiActionSchema.safeParse(JSON.parse(n[i]!.text)).success).toBe(true);
      for (let j = 0; j < n[i]!.logprobs.length; j++) expect(o[i]!.logprobs[j]!).toBeCloseTo(n[i]!.logprobs[j]!, 4);
    }
    const sampled = await onnx.complete(prompts, { ...s, temperature: 1 }, [3, 4], [grammar, grammar]);
    for (const r of sampled) expect(TomiActionSchema.safeParse(JSON.parse(r.text)).success, r.text).toBe(true);
  });
});

describe("masked sampling in TypeScript", () => {
  it("draws among the candidates only, top-k and top-p after the mask, log-prob under the mask", () => {
    const logits = [5, 1, 4, 0.5, 3, 2];
    const candidates = [1, 3, 4];
    const rng = Rng.seeded("mask");
    const seen = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const { index, logprob } = sampleAmong(logits, candidates, { temperature: 0.8, topK: 2, topP: 1 }, rng);
      seen.add(candidates[index]!);
      expect(logprob).toBeCloseTo(maskedLogprob(logits, candidates, candidates[index]!, 0.8), 10);
    }
    expect([...seen].sort()).toEqual([1, 4]);
    expect(sampleAmong(logits, [3], { temperature: 1, topK: 0, topP: 1 }, rng)).toEqual({ index: 0, logprob: 0 });
  });
});

describe("the policy agent's grammar", () => {
  it("writes actions as actionText does: JSON for the worlds' actions, a bare answer, or one of the listed options", async () => {
    const m = await tinyModel(35);
    const c = new NativeCompleter("t", m.model, m.tokenizer);
    const answer = z.object({ answer: z.string().max(20) });
    const bare = actionConstraint(m.tokenizer, answer, undefined, "schema")!;
    const options = [{ type: "none" }, { type: "enter", room: "kitchen" }] as const;
    const listed = actionConstraint(m.tokenizer, TomiActionSchema, options, "options")!;
    expect(actionConstraint(m.tokenizer, answer, undefined, "schema")).toBe(bare);
    expect(actionConstraint(m.tokenizer, TomiActionSchema, undefined, "off")).toBeUndefined();
    const seeds = Array.from({ length: 12 }, (_, i) => i);
    const prompt = m.tokenizer.encode("Where is the spinach?");
    const bareOut = await c.complete(seeds.map(() => prompt), { maxNewTokens: 24, temperature: 1 }, seeds, seeds.map(() => bare));
    for (const r of bareOut) {
      expect(r.text.length).toBeLessThanOrEqual(20);
      expect(parseAction(r.text, answer)).toBeDefined();
    }
    const listedOut = await c.complete(seeds.map(() => prompt), { maxNewTokens: 40, temperature: 1 }, seeds, seeds.map(() => listed));
    // {"type": "none"} alone would be written "none", which parseAction cannot read back for a union: its JSON.
    for (const r of listedOut) expect(['{"type":"none"}', '{"type":"enter","room":"kitchen"}']).toContain(r.text);
    expect(new Set(listedOut.map((r) => r.text)).size).toBe(2);
  });
});
