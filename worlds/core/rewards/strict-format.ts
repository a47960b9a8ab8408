/**
 * The strict format check of a model's reply against a world's action schema (zod). Stricter than
 * the agents' reader (agents/policy/action.ts), which digs JSON out of surrounding text: here the
 * whole reply must be the action, written as JSON the schema accepts, or, for an action with a
 * single string field (`{answer}`), a non-empty single line that is that field. Anything else is a
 * format failure, which the trainer gives the lowest reward.
 */
import { z } from "zod";

export type FormatResult<A> = { readonly ok: true; readonly action: A } | { readonly ok: false; readonly error: string };

export function strictFormat<A>(text: string, schema: z.ZodType<A>): FormatResult<A> {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: false, error: "empty reply" };
  if (trimmed.startsWith("{") || trimmed.startsWith("[") || trimmed.startsWith('"')) {
    let json: unknown;
    try {
      json = JSON.parse(trimmed);
    } catch {
      return { ok: false, error: "not valid JSON" };
    }
    const r = schema.safeParse(json);
    return r.success ? { ok: true, action: r.data } : { ok: false, error: `does not match the action schema: ${r.error.issues[0]?.message ?? "invalid"}` };
  }
  const field = singleStringField(schema);
  if (field === undefined) return { ok: false, error: "expected the action as JSON" };
  if (/[\r\n]/.test(trimmed)) return { ok: false, error: "expected a single line" };
  const r = schema.safeParse({ [field]: trimmed });
  return r.success ? { ok: true, action: r.data } : { ok: false, error: `does not match the action schema: ${r.error.issues[0]?.message ?? "invalid"}` };
}

/** The name of an object schema's only field when that field is a string. */
function singleStringField(schema: z.ZodType): string | undefined {
  if (!(schema instanceof z.ZodObject)) return undefined;
  const keys = Object.keys(schema.shape);
  if (keys.length !== 1) return undefined;
  const inner = schema.shape[keys[0]!];
  return inner instanceof z.ZodString ? keys[0] : undefined;
}
