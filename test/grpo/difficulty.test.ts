/**
 * Offline difficulty filtering (skipSolved): the greedy pass keeps what the policy gets wrong, the
 * list is saved for a resume and refused for other data, and the subset maps onto its base.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { NativeCompleter } from "../../agents/policy/generate.js";
import { AnswerSchema } from "../../worlds/question/world.js";
import { DataError } from "../../worlds/core/errors.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import type { DecisionPoint, PointSource } from "../../trainers/grpo/decision-point.js";
import { loadOrFindUnsolved, SubsetSource, unsolvedFile, unsolvedPoints } from "../../trainers/grpo/difficulty.js";
import { tempDir, tinyModel } from "../policy/fixtures.js";

function source(size: number, exact: (i: number) => number, prompt = (i: number) => `Question ${i}?`): PointSource {
  return {
    description: "questions",
    dataId: `q${size}`,
    size,
    runParams: {},
    async point(i: number): Promise<DecisionPoint> {
      return { id: `q${i}`, messages: [{ role: "user", content: prompt(i) }], schema: AnswerSchema as z.ZodType<unknown>, reference: "x", exact: () => exact(i), answerText: (a) => (a as { answer: string }).answer };
    },
    async logGroup() {},
  };
}

describe("difficulty filtering", () => {
  it("keeps every point the greedy policy gets wrong, and the ones too long to ask", async () => {
    const m = await tinyModel(41);
    const c = GrpoConfigSchema.parse({ maxNewTokens: 4 });
    const completer = new NativeCompleter("t", m.model, m.tokenizer);
    const wrong = await unsolvedPoints(source(70, () => 0), completer, m.tokenizer, c, m.model.engine.maxPositionEmbeddings);
    expect(wrong).toEqual(Array.from({ length: 70 }, (_, i) => i));
    // Point 3's prompt does not fit in 512 positions: kept (not solved), never asked.
    const long = await unsolvedPoints(source(5, () => 1, (i) => (i === 3 ? "word ".repeat(600) : `Q${i}`)), completer, m.tokenizer, c, m.model.engine.maxPositionEmbeddings);
    expect(long).toContain(3);
  });

  it("saves the list on a fresh start, reads it back on a resume, refuses it for other data", async () => {
    const out = tempDir("sw-grpo-diff-");
    const base = source(6, () => 0);
    let calls = 0;
    const first = await loadOrFindUnsolved(out, base, false, async () => (calls++, [1, 4, 5]));
    expect(first).toEqual([1, 4, 5]);
    expect(JSON.parse(readFileSync(unsolvedFile(out), "utf8"))).toEqual({ data: "q6", total: 6, unsolved: [1, 4, 5] });
    expect(await loadOrFindUnsolved(out, base, true, async () => (calls++, []))).toEqual([1, 4, 5]);
    expect(calls).toBe(1);
    await expect(loadOrFindUnsolved(out, source(7, () => 0), true, async () => [])).rejects.toThrow(DataError);
    await expect(loadOrFindUnsolved(tempDir(), base, true, async () => [])).rejects.toThrow(/unsolved\.json: missing/);
  });

  it("a subset maps its points onto the base's, and refuses to be empty", async () => {
    const base = source(6, () => 0);
    const sub = new SubsetSource(base, [1, 4, 5]);
    expect(sub.size).toBe(3);
    expect((await sub.point(1)).id).toBe("q4");
    expect(sub.description).toBe("questions, the 3 the starting policy gets wrong");
    expect(sub.dataId).not.toBe(new SubsetSource(base, [1, 4]).dataId);
    expect(() => new SubsetSource(base, [])).toThrow(/already answers all 6 decision points correctly/);
  });
});
