/**
 * GRPO's budget for a choice grammar (constrain options, a cited line): raised to the longest
 * choice, as the policy agent raises its max_new_tokens, so that no choice is silently out of
 * reach of the rollouts (the decoder leaves out what cannot finish in the tokens left); other
 * grammars are refused when --max-new-tokens may cut them.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { choiceBudget } from "../../agents/policy/action-grammar.js";
import { NativeCompleter } from "../../models/generate.js";
import { saveCheckpoint } from "../../models/checkpoint.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import type { DecisionPoint, PointSource } from "../../trainers/grpo/decision-point.js";
import type { StepMetrics } from "../../trainers/grpo/metrics.js";
import { batchBudgets, pointDecoding, replyTokens, rollout } from "../../trainers/grpo/rollout.js";
import { runGrpoSession } from "../../trainers/grpo/session.js";
import { AnswerSchema } from "../../worlds/question/world.js";
import { tempDir, tinyModel } from "../policy/fixtures.js";

const SHORT = "box";
const LONG = "the green cupboard in the hall";

function point(i: number, options: readonly string[] = [SHORT, LONG]): DecisionPoint {
  return {
    id: `where-${i}`,
    messages: [{ role: "user", content: `Question ${i}: where is the apple?` }],
    schema: AnswerSchema as z.ZodType<unknown>,
    options: options.map((answer) => ({ answer })),
    reference: LONG,
    exact: (a) => ((a as { answer: string }).answer === LONG ? 1 : 0),
    answerText: (a) => (a as { answer: string }).answer,
  };
}

class WhereTask implements PointSource {
  readonly description = "where";
  readonly dataId = "where-v1";
  readonly size = 4;
  readonly runParams = {};
  async point(i: number): Promise<DecisionPoint> {
    return point(i);
  }
  async logGroup(): Promise<void> {}
}

describe("GRPO's budget under a choice grammar", () => {
  it("is raised to the longest choice; a schema grammar that may not fit is refused", async () => {
    const m = await tinyModel(51);
    const longest = choiceBudget({ type: "choice", choices: [SHORT, LONG] });
    expect(longest).toBe(LONG.length);
    const raised = pointDecoding(point(0), m.tokenizer, { constrain: "options", maxNewTokens: 4 });
    expect(raised).toMatchObject({ budget: longest, raised: true });
    // The shortest finish fits 4 tokens: the old check let the point through and the long choice was never sampled.
    expect(raised.grammar!.minBudget).toBeLessThanOrEqual(4);
    expect(replyTokens(raised)).toBe(longest + 1);
    const ample = pointDecoding(point(0), m.tokenizer, { constrain: "options", maxNewTokens: 64 });
    expect(ample).toMatchObject({ budget: 64, raised: false });
    expect(replyTokens(ample)).toBe(64);
    expect(pointDecoding(point(0), m.tokenizer, { constrain: "off", maxNewTokens: 4 })).toEqual({ budget: 4, raised: false });
    // Raised points share the largest raised budget; the others keep maxNewTokens.
    const shorter = pointDecoding(point(1, [SHORT, "the red bag"]), m.tokenizer, { constrain: "options", maxNewTokens: 4 });
    const schema = pointDecoding(point(2), m.tokenizer, { constrain: "schema", maxNewTokens: 4 });
    expect(batchBudgets([raised, shorter, schema], 4)).toEqual([longest, longest, 4]);
    // A grammar that is no choice keeps the refusal, naming the point and both lengths.
    const p = { ...point(3), options: undefined, schema: z.object({ item: z.enum(["apple", "spinach"]), count: z.int().min(100).max(999) }) as z.ZodType<unknown> };
    expect(() => pointDecoding(p, m.tokenizer, { constrain: "schema", maxNewTokens: 4 })).toThrow(/decision point where-3: its action grammar may need up to \d+ tokens, more than maxNewTokens \(4\)/);
  });

  it("rollouts under --max-new-tokens below the longest choice sample it, and the trainer scores them under the same masks", async () => {
    const m = await tinyModel(52);
    const config = GrpoConfigSchema.parse({ prompts: 4, groupSize: 8, maxNewTokens: 4, constrain: "options", temperature: 1, klCoef: 0, seed: 2 });
    const r = await rollout(await Promise.all([0, 1, 2, 3].map((i) => point(i))), {
      completer: new NativeCompleter("t", m.model, m.tokenizer),
      model: m.model,
      tokenizer: m.tokenizer,
      config,
      maxPositions: m.model.engine.maxPositionEmbeddings,
      seedOf: (i, j) => 100 * i + j,
    });
    const texts = r.groups.flatMap((g) => g.replies.map((x) => x.scored.text.trim()));
    expect(new Set(texts)).toEqual(new Set([SHORT, LONG]));
    expect(r.groups.every((g) => g.budget === LONG.length)).toBe(true);
    expect(Math.max(...r.groups.flatMap((g) => g.replies.map((x) => x.ids.length)))).toBeGreaterThan(4);

    // A whole run (with the difficulty filter, which asks under the same budgets): the masks the
    // trainer recomputes take the group's budget, or a long reply would be "not sampled under the grammar".
    const model = tempDir("sw-grpo-choice-");
    saveCheckpoint(model, m.model, m.files);
    const metrics: StepMetrics[] = [];
    const run = await runGrpoSession({ out: tempDir("sw-grpo-choice-"), model, source: new WhereTask(), config: GrpoConfigSchema.parse({ ...config, steps: 2, skipSolved: true, keepSolved: 1 }), saveEvery: 1000, keep: 1, onStep: (s) => metrics.push(s) });
    expect(run.steps).toBe(2);
    expect(Math.max(...metrics.map((s) => s.responseLengthMax))).toBeGreaterThan(4);
    expect(metrics.every((s) => s.formatRate === 1)).toBe(true);
  });
});
