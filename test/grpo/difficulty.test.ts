/**
 * Offline difficulty filtering (skipSolved): the greedy pass keeps what the policy gets wrong (and,
 * with keepSolved, a seeded share of the rest), the list is saved for a resume and refused for other data, and the subset maps onto its base.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { NativeCompleter } from "../../models/generate.js";
import { AnswerSchema } from "../../worlds/question/world.js";
import { DataError } from "../../worlds/core/errors.js";
import { configFromArgs } from "../../cli/commands/train-grpo.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import { grpoSettings } from "../../trainers/grpo/trainer.js";
import type { DecisionPoint, PointSource } from "../../trainers/grpo/decision-point.js";
import { loadOrFindUnsolved, pointKinds, pointsToTrain, SubsetSource, unsolvedFile, unsolvedPoints } from "../../trainers/grpo/difficulty.js";
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

  it("keepSolved keeps a seeded share of the solved points (a replay against forgetting)", () => {
    const solved = Array.from({ length: 400 }, (_, i) => i % 5 !== 0);
    const wrong = solved.flatMap((ok, i) => (ok ? [] : [i]));
    expect(pointsToTrain(solved, 0, 1)).toEqual(wrong);
    const a = pointsToTrain(solved, 0.25, 1);
    // Every unsolved point, and Binomial(320, 0.25) solved ones: mean 80, sd 7.7.
    expect(wrong.every((i) => a.includes(i))).toBe(true);
    const extra = a.length - wrong.length;
    expect(extra).toBeGreaterThan(55);
    expect(extra).toBeLessThan(105);
    expect(a).toEqual([...a].sort((x, y) => x - y));
    expect(pointsToTrain(solved, 0.25, 1)).toEqual(a);
    expect(pointsToTrain(solved, 0.25, 2)).not.toEqual(a);
    expect(pointsToTrain(solved, 1, 1)).toHaveLength(400);
    expect(() => GrpoConfigSchema.parse({ keepSolved: 1.5 })).toThrow();
  });

  it("keepSolvedByKind keeps each named kind's share of its solved points, keepSolved the others'", async () => {
    // Even points are kind a, odd ones kind b; every point is solved but each tenth.
    const solved = Array.from({ length: 400 }, (_, i) => i % 10 !== 0);
    const kind = (i: number) => (i % 2 === 0 ? "a" : "b");
    const kept = pointsToTrain(solved, (i) => (kind(i) === "a" ? 1 : 0), 1);
    expect(kept).toEqual(solved.flatMap((ok, i) => (!ok || kind(i) === "a" ? [i] : [])));
    // One share for every point is keepSolved itself, draw for draw; and keepSolved draws as it did
    // before keepSolvedByKind existed (the solved points kept, as the code before it kept them).
    expect(pointsToTrain(solved, () => 0.25, 3)).toEqual(pointsToTrain(solved, 0.25, 3));
    const before = pointsToTrain(solved, 0.25, 3);
    expect(before).toHaveLength(134);
    expect(before.filter((i) => i % 10 !== 0).slice(0, 12)).toEqual([7, 11, 12, 16, 24, 28, 32, 33, 34, 41, 44, 46]);
    // Through the greedy pass: a source's kinds name the shares, an unnamed kind keeps keepSolved.
    const m = await tinyModel(41);
    const completer = new NativeCompleter("t", m.model, m.tokenizer);
    const kinds = { ...source(40, () => 1), kind };
    const c = GrpoConfigSchema.parse({ maxNewTokens: 4, skipSolved: true, keepSolved: 0, keepSolvedByKind: { a: 1 } });
    expect(await unsolvedPoints(kinds, completer, m.tokenizer, c, m.model.engine.maxPositionEmbeddings)).toEqual(Array.from({ length: 20 }, (_, i) => 2 * i));
    const d = GrpoConfigSchema.parse({ maxNewTokens: 4, skipSolved: true, keepSolved: 1, keepSolvedByKind: { a: 0 } });
    expect(await unsolvedPoints(kinds, completer, m.tokenizer, d, m.model.engine.maxPositionEmbeddings)).toEqual(Array.from({ length: 20 }, (_, i) => 2 * i + 1));
    // A kind named like an Object method is a kind like any other (keepSolved's share), not the method.
    const methodNamed = { ...source(40, () => 1), kind: (i: number) => (i % 2 === 0 ? "a" : "toString") };
    expect(await unsolvedPoints(methodNamed, completer, m.tokenizer, d, m.model.engine.maxPositionEmbeddings)).toEqual(Array.from({ length: 20 }, (_, i) => 2 * i + 1));
    // The kinds a name is checked against: none for a source without kinds.
    expect(pointKinds(kinds)).toEqual(["a", "b"]);
    expect(pointKinds(source(3, () => 1))).toEqual([]);
    expect(() => GrpoConfigSchema.parse({ keepSolvedByKind: { a: 2 } })).toThrow();
    // From the command line; and a run's saved settings name the shares only when given, so earlier checkpoints resume as they were.
    const args = { "skip-solved": true, "keep-solved-type": "first_order_tom=0.1, reality=1" } as Parameters<typeof configFromArgs>[0];
    expect(GrpoConfigSchema.parse(configFromArgs(args)).keepSolvedByKind).toEqual({ first_order_tom: 0.1, reality: 1 });
    expect(grpoSettings(GrpoConfigSchema.parse({}), "d")).not.toHaveProperty("keepSolvedByKind");
    expect(grpoSettings(GrpoConfigSchema.parse({ keepSolvedByKind: { a: 1 } }), "d")).toMatchObject({ keepSolvedByKind: { a: 1 } });
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
