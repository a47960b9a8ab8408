/**
 * GRPO under a grammar trains on the distribution the rollout sampled from: the masks the trainer
 * recomputes from a reply (grammar-masks.ts) are the sampler's, so the teacher-forced log-probs of
 * the policy head under them equal the log-probs the sampler reported while generating; and a run
 * with `constrain: schema` samples only replies that pass the strict format.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { actionConstraint } from "../../agents/policy/action-grammar.js";
import { NativeCompleter } from "../../models/generate.js";
import { allowedTokens, MaskPool } from "../../trainers/grpo/grammar-masks.js";
import { replyValues, sequenceBatch, type Sequence } from "../../trainers/grpo/sequences.js";
import { strictFormat } from "../../worlds/core/rewards/strict-format.js";
import { AnswerSchema } from "../../worlds/question/world.js";
import { TomiActionSchema } from "../../worlds/tomi/world.js";
import { tinyModel } from "../policy/fixtures.js";

const ORDER = z.object({ item: z.enum(["apple", "box", "spinach"]), count: z.int().min(1).max(12), note: z.string().max(10) });

describe("GRPO's masks under a grammar", () => {
  it("give the teacher-forced pass the log-probs the sampler reported, for every token of every reply", async () => {
    const m = await tinyModel(41);
    const completer = new NativeCompleter("t", m.model, m.tokenizer);
    const temperature = 0.9;
    const budget = 40;
    const stops = new Set(m.tokenizer.stopTokenIds);
    const pool = new MaskPool();
    const seqs: Sequence[] = [];
    const sampled: number[][] = [];
    for (const [i, schema] of [ORDER, TomiActionSchema, AnswerSchema].entries()) {
      const grammar = actionConstraint(m.tokenizer, schema as z.ZodType, undefined, "schema")!;
      const prompt = m.tokenizer.encode(`Question ${i}: where is the spinach?`);
      const seeds = Array.from({ length: 6 }, (_, k) => 10 * i + k);
      const out = await completer.complete(seeds.map(() => prompt), { maxNewTokens: budget, temperature }, seeds, seeds.map(() => grammar));
      for (const r of out) {
        expect(strictFormat(r.text, schema as z.ZodType).ok || r.finishReason === "length", r.text).toBe(true);
        seqs.push({ prompt, reply: r.tokens, allowed: allowedTokens(grammar, r.tokens, budget, stops, pool) });
        sampled.push([...r.logprobs]);
      }
    }
    const { batch, masks } = sequenceBatch(seqs);
    expect(masks).toBeDefined();
    const pass = await m.model.policyPass(batch, false, { temperature, masks: masks! });
    const logp = replyValues(pass.logprobs, seqs, batch.seqLen);
    let forced = 0;
    seqs.forEach((s, i) => {
      s.reply.forEach((_, j) => {
        if (s.allowed![j]!.length === 1) {
          forced++;
          expect(logp[i]![j]).toBe(0);
        }
        expect(logp[i]![j]!).toBeCloseTo(sampled[i]![j]!, 4);
      });
    });
    expect(forced).toBeGreaterThan(0);
    // Without the masks the same tokens are less likely: the mask is not a no-op.
    const free = replyValues((await m.model.policyPass(batch, false, { temperature })).logprobs, seqs, batch.seqLen);
    expect(free.flatMap((r) => [...r]).reduce((a, b) => a + b, 0)).toBeLessThan(logp.flatMap((r) => [...r]).reduce((a, b) => a + b, 0) - 1);
    // Equal lists are stored once: the batch holds a fraction of what the positions list.
    const listed = seqs.reduce((a, s) => a + s.allowed!.reduce((b, l) => b + l.length, 0), 0);
    expect(masks!.tokens.length * 4).toBeLessThan(listed);
  });

  it("refuses a reply the grammar would not have sampled", async () => {
    const m = await tinyModel(42);
    const grammar = actionConstraint(m.tokenizer, ORDER, undefined, "schema")!;
    const reply = m.tokenizer.encode("hello");
    expect(() => allowedTokens(grammar, reply, 40, new Set(m.tokenizer.stopTokenIds), new MaskPool())).toThrow(/reply token 0 .* is not one the grammar allows there/);
  });
});
