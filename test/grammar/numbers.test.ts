/**
 * Numbers between bounds, by construction: every integer near the bounds is accepted exactly when
 * it lies within them, and every decimal the automaton writes parses (as JavaScript reads JSON)
 * to a number within them, exclusive bounds included.
 */
import { describe, expect, it } from "vitest";
import { compileBytes, GrammarError } from "../../models/grammar/index.js";
import { Rng } from "../../worlds/core/rng.js";
import { randomText, textOf } from "./helpers.js";

const UTF8 = new TextEncoder();
const accepts = (schema: object, text: string) => compileBytes({ type: "json_schema", schema }).matches(UTF8.encode(text));

describe("integer ranges", () => {
  it("accept exactly the integers within the bounds, written without leading zeros or -0", () => {
    const cases: [number, number][] = [
      [-5, 300],
      [0, 9],
      [-1000, -7],
      [19, 21],
      [99, 1001],
      [-12, 12],
    ];
    for (const [lo, hi] of cases) {
      const a = compileBytes({ type: "json_schema", schema: { type: "integer", minimum: lo, maximum: hi } });
      for (let x = lo - 150; x <= hi + 150; x++) expect(a.matches(UTF8.encode(String(x))), `${x} in [${lo}, ${hi}]`).toBe(x >= lo && x <= hi);
      for (const bad of ["-0", "007", "+1", "1.0", "1e2", "", "-"]) expect(a.matches(UTF8.encode(bad)), bad).toBe(false);
    }
  });

  it("read exclusive and fractional bounds as the integers strictly inside", () => {
    expect(accepts({ type: "integer", exclusiveMinimum: 3, exclusiveMaximum: 6 }, "3")).toBe(false);
    expect(accepts({ type: "integer", exclusiveMinimum: 3, exclusiveMaximum: 6 }, "4")).toBe(true);
    expect(accepts({ type: "integer", exclusiveMinimum: 3, exclusiveMaximum: 6 }, "6")).toBe(false);
    expect(accepts({ type: "integer", minimum: -2.5, maximum: 2.5 }, "-2")).toBe(true);
    expect(accepts({ type: "integer", minimum: -2.5, maximum: 2.5 }, "-3")).toBe(false);
    expect(accepts({ type: "integer", minimum: -2.5, maximum: 2.5 }, "3")).toBe(false);
  });

  it("keep unbounded integers within JavaScript's safe range", () => {
    expect(accepts({ type: "integer" }, String(Number.MAX_SAFE_INTEGER))).toBe(true);
    expect(accepts({ type: "integer" }, "9007199254740992")).toBe(false);
    expect(accepts({ type: "integer" }, String(-Number.MAX_SAFE_INTEGER))).toBe(true);
    expect(accepts({ type: "integer" }, "-9007199254740992")).toBe(false);
  });

  it("refuse an empty range", () => {
    expect(() => compileBytes({ type: "json_schema", schema: { type: "integer", minimum: 3.2, maximum: 3.8 } })).toThrow(GrammarError);
  });
});

describe("decimal ranges", () => {
  const ranges = [
    { minimum: -2.5, exclusiveMaximum: 7.25 },
    { exclusiveMinimum: 0, exclusiveMaximum: 1 },
    { minimum: 0.1, maximum: 0.30000000000000004 },
    { minimum: -1e-7, maximum: 1e-7 },
    { exclusiveMinimum: -100, maximum: -99.5 },
    { minimum: 1234.5678 },
    { exclusiveMaximum: -0.001 },
    {},
  ];

  it("write only numbers within the bounds, however they are read", () => {
    const rng = Rng.seeded("numbers");
    for (const r of ranges) {
      const a = compileBytes({ type: "json_schema", schema: { type: "number", ...r } });
      const lo = r.minimum ?? r.exclusiveMinimum ?? -Infinity;
      const hi = r.maximum ?? r.exclusiveMaximum ?? Infinity;
      for (let i = 0; i < 300; i++) {
        const text = textOf(randomText(a, rng, 40));
        expect(text, JSON.stringify(r)).toMatch(/^-?(0|[1-9]\d*)(\.\d+)?$/);
        expect(text.replace(/^-?0?\.?/, "").replace(".", "").length, text).toBeLessThanOrEqual(15);
        const x = JSON.parse(text) as number;
        expect(Object.is(x, -0), text).toBe(false);
        if (r.exclusiveMinimum !== undefined) expect(x, text).toBeGreaterThan(lo);
        else expect(x, text).toBeGreaterThanOrEqual(lo);
        if (r.exclusiveMaximum !== undefined) expect(x, text).toBeLessThan(hi);
        else expect(x, text).toBeLessThanOrEqual(hi);
      }
    }
  });

  it("accept the writings at and next to the bounds exactly as the bounds say", () => {
    const s = { type: "number", minimum: -2.5, exclusiveMaximum: 7.25 };
    for (const [t, ok] of [
      ["-2.5", true],
      ["-2.50", true],
      ["-2.500000001", false],
      ["-2.49", true],
      ["7.25", false],
      ["7.2499999", true],
      ["7.250000001", false],
      ["7", true],
      ["0", true],
      ["0.0", true],
      ["-0", false],
      ["-0.0", false],
      ["8", false],
      ["1.", false],
      [".5", false],
    ] as const)
      expect(accepts(s, t), t).toBe(ok);
    expect(accepts({ type: "number", exclusiveMinimum: 0 }, "0.000000000000001")).toBe(true);
    expect(accepts({ type: "number", exclusiveMinimum: 0 }, "0")).toBe(false);
    expect(accepts({ type: "number", exclusiveMinimum: 0 }, "0.0000")).toBe(false);
    // At most 15 digits: 0.1 + 15 digits is not written, though it lies in range.
    expect(accepts({ type: "number" }, "0.123456789012345")).toBe(true);
    expect(accepts({ type: "number" }, "0.1234567890123456")).toBe(false);
    expect(accepts({ type: "number" }, "123456789012345")).toBe(true);
    expect(accepts({ type: "number" }, "1234567890123456")).toBe(false);
  });
});
