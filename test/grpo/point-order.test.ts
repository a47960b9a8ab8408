/**
 * The order a GRPO run draws its points in (trainers/grpo/point-order.ts): as they come, or every
 * question type in equal shares; the same positions on a resume however the run was cut.
 */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { configFromArgs } from "../../cli/commands/train-grpo.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import type { DecisionPoint, PointSource } from "../../trainers/grpo/decision-point.js";
import { SubsetSource } from "../../trainers/grpo/difficulty.js";
import { JoinedPoints } from "../../trainers/grpo/joined-points.js";
import { pointOrder } from "../../trainers/grpo/point-order.js";
import { grpoSettings } from "../../trainers/grpo/trainer.js";
import { generateTomi } from "../../worlds/tomi/generator.js";
import { tempDir } from "../policy/fixtures.js";

/** `kinds[i]` is point i's kind; no kinds: a source that names none. */
function source(size: number, kinds?: (i: number) => string): PointSource {
  return {
    description: "test",
    dataId: "test",
    size,
    runParams: {},
    point: () => Promise.reject(new Error("not made in this test")),
    ...(kinds ? { kind: kinds } : {}),
    logGroup: () => Promise.resolve(),
  };
}

const count = (xs: readonly string[]) => xs.reduce<Record<string, number>>((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {});

describe("point order", () => {
  it("none: each pass over the data draws every point once, a new shuffle each pass", () => {
    const order = pointOrder(source(10), "none", 3);
    const first = order(0, 10);
    const second = order(10, 10);
    expect([...first].sort((a, b) => a - b)).toEqual([...Array(10).keys()]);
    expect([...second].sort((a, b) => a - b)).toEqual([...Array(10).keys()]);
    expect(second).not.toEqual(first);
    expect(pointOrder(source(10), "none", 4)(0, 10)).not.toEqual(first);
  });

  it("type: every kind in equal shares however rare, each kind's points all drawn before one repeats", () => {
    // 90 common points and 10 rare ones, interleaved.
    const kindOf = (i: number) => (i % 10 === 3 ? "rare" : "common");
    const order = pointOrder(source(100, kindOf), "type", 1);
    const drawn = order(0, 40);
    expect(count(drawn.map(kindOf))).toEqual({ common: 20, rare: 20 });
    // Every cycle of two draws has one of each.
    for (let k = 0; k < 40; k += 2) expect(new Set(drawn.slice(k, k + 2).map(kindOf)).size).toBe(2);
    const rare = drawn.filter((i) => kindOf(i) === "rare");
    expect([...rare.slice(0, 10)].sort((a, b) => a - b)).toEqual([3, 13, 23, 33, 43, 53, 63, 73, 83, 93]);
    expect([...rare.slice(10)].sort((a, b) => a - b)).toEqual([3, 13, 23, 33, 43, 53, 63, 73, 83, 93]);
    expect(new Set(drawn.filter((i) => kindOf(i) === "common")).size).toBe(20);
    // As they come, the rare kind is a tenth of the draws.
    expect(count(pointOrder(source(100, kindOf), "none", 1)(0, 100).map(kindOf))).toEqual({ common: 90, rare: 10 });
  });

  it("a position names the same point whatever batches the run was cut into (resume)", () => {
    const kindOf = (i: number) => ["a", "b", "c"][i % 7 === 0 ? 0 : i % 2 === 0 ? 1 : 2]!;
    for (const balance of ["none", "type"] as const) {
      const order = pointOrder(source(50, kindOf), balance, 9);
      const whole = order(0, 120);
      const pieces = [order(0, 7), order(7, 33), order(40, 1), order(41, 79)].flat();
      expect(pieces).toEqual(whole);
    }
  });

  it("type over a source without kinds: one kind, every point once a pass", () => {
    const drawn = pointOrder(source(12), "type", 2)(0, 12);
    expect([...drawn].sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
  });

  it("a benchmark's point is of its question's type, through joined and subset sources", async () => {
    const dir = tempDir("sw-point-order-");
    const open = async (name: string, n: number, seed: number) => {
      const f = await generateTomi(n, seed);
      writeFileSync(join(dir, `${name}.txt`), f.txt);
      writeFileSync(join(dir, `${name}.trace`), f.trace);
      return BenchPoints.open("tomi", join(dir, `${name}.txt`), "vanilla");
    };
    const a = await open("a", 4, 1);
    const b = await open("b", 4, 2);
    const joined = new JoinedPoints([a, b]);
    const subset = new SubsetSource(joined, [1, 5, joined.size - 1]);
    const typeOf = async (s: PointSource, i: number) => ((await s.point(i)) as DecisionPoint & { item: { type: string } }).item.type;
    for (let i = 0; i < joined.size; i++) expect(joined.kind(i)).toBe(await typeOf(joined, i));
    for (let i = 0; i < subset.size; i++) expect(subset.kind(i)).toBe(await typeOf(subset, i));
    const kinds = new Set(Array.from({ length: joined.size }, (_, i) => joined.kind(i)));
    for (const k of kinds) expect(["first_order_tom", "first_order_no_tom", "second_order_tom", "second_order_no_tom", "memory", "reality"]).toContain(k);
    expect(kinds.size).toBeGreaterThanOrEqual(3);
  });

  it("a run's saved settings name the balance only when it is on, so earlier checkpoints resume as they were", () => {
    expect(grpoSettings(GrpoConfigSchema.parse({}), "d")).not.toHaveProperty("balance");
    expect(grpoSettings(GrpoConfigSchema.parse({ balance: "type" }), "d")).toMatchObject({ balance: "type" });
    expect(() => GrpoConfigSchema.parse({ balance: "story" })).toThrow();
    expect(GrpoConfigSchema.parse(configFromArgs({ balance: "type" } as Parameters<typeof configFromArgs>[0])).balance).toBe("type");
  });
});
