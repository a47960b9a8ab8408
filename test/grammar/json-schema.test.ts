/**
 * zod schemas -> JSON Schema -> byte automaton: every text the automaton writes validates (with
 * the zod schema itself, with zod's reading of the JSON Schema, and with Python's jsonschema,
 * a validator nobody here wrote, when it is installed); random valid values, written as the
 * project writes JSON, are accepted; what cannot be enforced is refused with its JSON pointer.
 */
import { describe, expect, it } from "vitest";
import { loadScenario } from "../../worlds/registry.js";
import { z } from "zod";
import { compileBytes, GrammarError } from "../../models/grammar/index.js";
import { AnswerSchema } from "../../worlds/question/world.js";
import { TomiActionSchema } from "../../worlds/tomi/world.js";
import { Rng } from "../../worlds/core/rng.js";
import { randomText, textOf } from "./helpers.js";
import { pythonFailures, V1_SCHEMAS } from "./v1-schemas.js";

const UTF8 = new TextEncoder();

const MORE: Record<string, z.ZodType> = {
  record: z.record(z.string().max(8), z.int().min(0).max(9)),
  union: z.union([z.string().max(5), z.number().min(0).max(1), z.null()]),
  email: z.object({ email: z.email(), id: z.uuid() }),
  unicode: z.object({ text: z.string().min(3).max(6) }),
};

describe("texts written for a schema validate", () => {
  it("for the worlds' action schemas, the /v1 schemas and more zod shapes: zod, zod's JSON Schema reader and Python's jsonschema agree", async () => {
    const schemas: Record<string, z.ZodType> = { ...V1_SCHEMAS, ...MORE, tomi: TomiActionSchema, answer: AnswerSchema };
    for (const world of ["tomi", "hitom", "fantom"]) {
      const sc = await (await loadScenario(world)).create(3);
      const agent = sc.world.agents(sc.initialState)[0]!;
      schemas[`${world}-scenario`] = sc.world.actionSchema(sc.initialState, agent) as z.ZodType;
    }
    const rng = Rng.seeded("json-schema");
    const pairs: { schema: unknown; instance: unknown }[] = [];
    for (const [name, zs] of Object.entries(schemas)) {
      const schema = z.toJSONSchema(zs);
      const reread = z.fromJSONSchema(schema as never);
      for (const whitespace of ["compact", "flexible"] as const) {
        const a = compileBytes({ type: "json_schema", schema, whitespace });
        for (let i = 0; i < 25; i++) {
          const text = textOf(randomText(a, rng, 160));
          if (whitespace === "compact") expect(text.replace(/"(?:[^"\\]|\\.)*"/g, '""'), name).not.toMatch(/\s/);
          const value = JSON.parse(text) as unknown;
          expect(zs.safeParse(value).success, `${name}: ${text}`).toBe(true);
          expect(reread.safeParse(value).success, `${name} (reread): ${text}`).toBe(true);
          pairs.push({ schema, instance: value });
        }
      }
    }
    const failures = pythonFailures(pairs);
    if (failures) expect(failures).toEqual([]);
  });

  it("counts string lengths so that both zod (UTF-16 units) and JSON Schema (code points) agree", () => {
    const a = compileBytes({ type: "json_schema", schema: { type: "string", minLength: 2, maxLength: 3 } });
    const ok = (s: string) => a.matches(UTF8.encode(JSON.stringify(s)));
    expect(ok("ab")).toBe(true);
    expect(ok("abc")).toBe(true);
    expect(ok("abcd")).toBe(false);
    expect(ok("a\u00e9")).toBe(true);
    expect(ok("ab\u{1F600}")).toBe(false); // 4 UTF-16 units
    expect(ok("a\u{1F600}")).toBe(false); // astral before the minimum: 1 code point + 1
    expect(ok("aa\u{1F600}".slice(0, 2) + "")).toBe(true);
    const b = compileBytes({ type: "json_schema", schema: { type: "string", minLength: 1, maxLength: 3 } });
    expect(b.matches(UTF8.encode(JSON.stringify("a\u{1F600}")))).toBe(true);
    expect(b.matches(UTF8.encode(JSON.stringify("\u{1F600}")))).toBe(false);
    // Escapes as JSON.stringify writes them, each one character.
    expect(ok('a"')).toBe(true);
    expect(ok("\n\t\u0001")).toBe(true);
    expect(a.matches(UTF8.encode('"\\u0041b"'))).toBe(false);
  });
});

describe("valid values are accepted", () => {
  it("random values of the /v1 schemas, written compactly and (flexible) indented", () => {
    const rng = Rng.seeded("values");
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng.next() * xs.length)]!;
    const str = (min: number, max: number, chars = "ab é\"\\\n\u4e2d") => Array.from({ length: min + Math.floor(rng.next() * (max - min + 1)) }, () => pick([...chars])).join("");
    const num = (lo: number, hi: number, digits = 3) => Number((lo + rng.next() * (hi - lo)).toFixed(digits));
    const order = () => ({
      customer: { name: str(1, 40), tier: pick(["free", "pro", "team"]) },
      items: Array.from({ length: 1 + Math.floor(rng.next() * 4) }, () => ({ sku: `${str(3, 3, "ABCXYZ")}-${String(Math.floor(rng.next() * 10000)).padStart(4, "0")}`, quantity: 1 + Math.floor(rng.next() * 99), price: num(0, 10000, 2) })),
      note: rng.next() < 0.5 ? null : str(0, 80),
    });
    const reading = () => ({
      sensor: pick(["thermo", "hygro", "baro"]),
      celsius: num(-39.9, 60.4),
      ok: rng.next() < 0.5,
      tags: Array.from({ length: Math.floor(rng.next() * 4) }, () => str(0, 12)),
      ...(rng.next() < 0.5 ? { location: { room: str(2, 20), floor: -2 + Math.floor(rng.next() * 15) } } : {}),
    });
    const compact = { order: compileBytes({ type: "json_schema", schema: z.toJSONSchema(V1_SCHEMAS.order!) }), reading: compileBytes({ type: "json_schema", schema: z.toJSONSchema(V1_SCHEMAS.reading!) }) };
    const flexible = { order: compileBytes({ type: "json_schema", schema: z.toJSONSchema(V1_SCHEMAS.order!), whitespace: "flexible" }), reading: compileBytes({ type: "json_schema", schema: z.toJSONSchema(V1_SCHEMAS.reading!), whitespace: "flexible" }) };
    for (let i = 0; i < 200; i++) {
      for (const [name, make] of [
        ["order", order],
        ["reading", reading],
      ] as const) {
        const v = make();
        expect(V1_SCHEMAS[name]!.safeParse(v).success).toBe(true);
        expect(compact[name].matches(UTF8.encode(JSON.stringify(v))), JSON.stringify(v)).toBe(true);
        expect(flexible[name].matches(UTF8.encode(JSON.stringify(v, null, 2))), JSON.stringify(v, null, 2)).toBe(true);
        expect(flexible[name].matches(UTF8.encode(JSON.stringify(v).replace(/([:,])"/g, '$1 "')))).toBe(true);
        expect(compact[name].matches(UTF8.encode(JSON.stringify(v, null, 1)))).toBe(false);
      }
    }
  });

  it("every action a world lists as valid, written as actionText writes it", async () => {
    for (const world of ["tomi", "hitom", "fantom"]) {
      const sc = await (await loadScenario(world)).create(5);
      for (const agent of sc.world.agents(sc.initialState)) {
        const a = compileBytes({ type: "json_schema", schema: z.toJSONSchema(sc.world.actionSchema(sc.initialState, agent)) });
        for (const action of sc.world.options?.(sc.initialState, agent) ?? []) expect(a.matches(UTF8.encode(JSON.stringify(action))), JSON.stringify(action)).toBe(true);
      }
    }
  });
});

describe("what cannot be enforced is refused, naming the schema part", () => {
  const refused = (schema: unknown) => {
    try {
      compileBytes({ type: "json_schema", schema });
    } catch (err) {
      expect(err).toBeInstanceOf(GrammarError);
      return { pointer: (err as GrammarError).pointer, message: (err as GrammarError).reason };
    }
    throw new Error("compiled");
  };

  it("unsupported keywords, formats, patterns and combinations", () => {
    expect(refused({ type: "object", properties: { a: { type: "string", not: { const: "x" } } } })).toEqual({ pointer: "/properties/a/not", message: 'the keyword "not" is not supported' });
    expect(refused({ type: "object", properties: { a: { type: "string", format: "uri" } } })).toMatchObject({ pointer: "/properties/a/format", message: expect.stringMatching(/format "uri" is not supported/) });
    expect(refused({ type: "string", pattern: "^(a)\\1$" })).toMatchObject({ pointer: "/pattern", message: expect.stringMatching(/backreferences/) });
    expect(refused({ type: "string", pattern: "a(?=b)" })).toMatchObject({ message: expect.stringMatching(/lookaround/) });
    expect(refused({ type: "number", multipleOf: 0.5 })).toMatchObject({ pointer: "/multipleOf" });
    expect(refused({ type: "array", items: { type: "string" }, uniqueItems: true })).toMatchObject({ pointer: "/uniqueItems" });
    expect(refused({ allOf: [{ type: "string" }, { maxLength: 3 }] })).toMatchObject({ pointer: "/allOf" });
    expect(refused({ $ref: "https://example.com/s.json" })).toMatchObject({ pointer: "/$ref" });
    expect(refused({ type: "object", properties: {}, required: ["a"], additionalProperties: false })).toMatchObject({ pointer: "/required" });
    expect(refused({ type: "string", minLength: 5, maxLength: 2 })).toMatchObject({ pointer: "" });
  });

  it("oneOf only when its alternatives cannot overlap", () => {
    expect(refused({ oneOf: [{ type: "string" }, { type: "string", maxLength: 3 }] })).toMatchObject({ pointer: "/oneOf", message: expect.stringMatching(/0 and 1 may both match/) });
    expect(refused({ oneOf: [{ type: "number" }, { type: "integer" }] })).toMatchObject({ pointer: "/oneOf" });
    expect(() => compileBytes({ type: "json_schema", schema: { oneOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] } })).not.toThrow();
    expect(() => compileBytes({ type: "json_schema", schema: z.toJSONSchema(TomiActionSchema) })).not.toThrow();
  });
});

describe("references", () => {
  it("follow $defs, and cut recursion at its depth where the schema lets it end", () => {
    const tree = { $defs: { node: { type: "object", properties: { v: { type: "integer", minimum: 0, maximum: 9 }, kids: { type: "array", items: { $ref: "#/$defs/node" }, maxItems: 2 } }, required: ["v", "kids"], additionalProperties: false } }, $ref: "#/$defs/node" };
    const a = compileBytes({ type: "json_schema", schema: tree, maxRefDepth: 3 });
    const ok = (v: unknown) => a.matches(UTF8.encode(JSON.stringify(v)));
    expect(ok({ v: 1, kids: [] })).toBe(true);
    expect(ok({ v: 1, kids: [{ v: 2, kids: [{ v: 3, kids: [] }] }] })).toBe(true);
    expect(ok({ v: 1, kids: [{ v: 2, kids: [{ v: 3, kids: [{ v: 4, kids: [] }] }] }] })).toBe(false);
    // A recursion that cannot end within the depth leaves nothing to write.
    const endless = { $defs: { n: { type: "object", properties: { next: { $ref: "#/$defs/n" } }, required: ["next"] } }, $ref: "#/$defs/n" };
    expect(() => compileBytes({ type: "json_schema", schema: endless })).toThrow(/allows no value/);
  });
});
