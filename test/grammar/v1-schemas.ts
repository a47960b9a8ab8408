/** Schemas as /v1 clients send them (nested objects, enums, arrays, bounded numbers), and an outside validator. */
import { spawnSync } from "node:child_process";
import { z } from "zod";

/** The /v1 schemas of the acceptance test. */
export const V1_SCHEMAS: Record<string, z.ZodType> = {
  order: z.object({
    customer: z.object({ name: z.string().min(1).max(40), tier: z.enum(["free", "pro", "team"]) }),
    items: z.array(z.object({ sku: z.string().regex(/^[A-Z]{3}-\d{4}$/), quantity: z.int().min(1).max(99), price: z.number().min(0).max(10000) })).min(1).max(4),
    note: z.string().max(80).nullable(),
  }),
  reading: z.object({
    sensor: z.enum(["thermo", "hygro", "baro"]),
    celsius: z.number().gt(-40).lt(60.5),
    ok: z.boolean(),
    tags: z.array(z.string().max(12)).max(3),
    location: z.object({ room: z.string().min(2).max(20), floor: z.int().min(-2).max(12) }).optional(),
  }),
  plan: z.object({
    steps: z
      .array(z.discriminatedUnion("kind", [z.object({ kind: z.literal("say"), text: z.string().max(60) }), z.object({ kind: z.literal("wait"), seconds: z.int().min(0).max(3600) }), z.object({ kind: z.literal("move"), to: z.tuple([z.number().min(-1).max(1), z.number().min(-1).max(1)]) })]))
      .min(1)
      .max(3),
    confidence: z.number().min(0).max(1),
    when: z.iso.date().optional(),
  }),
};

/**
 * Python's jsonschema (Draft 2020-12, a validator nobody here wrote) on each (schema, instance):
 * the failures, or undefined when Python or jsonschema is not installed.
 */
export function pythonFailures(pairs: { schema: unknown; instance: unknown }[]): string[] | undefined {
  if (spawnSync("python3", ["-c", "import jsonschema"], { encoding: "utf8" }).status !== 0) return undefined;
  const script = `
import json, sys, jsonschema
out = []
for p in json.load(sys.stdin):
    v = jsonschema.Draft202012Validator(p["schema"])
    errs = [e.message for e in v.iter_errors(p["instance"])]
    if errs: out.append(json.dumps(p["instance"]) + ": " + errs[0])
print(json.dumps(out))`;
  const r = spawnSync("python3", ["-c", script], { input: JSON.stringify(pairs), encoding: "utf8", maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as string[];
}

