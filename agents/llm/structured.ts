/**
 * Structured output: the JSON schema a reply must match, derived from the world's zod schema,
 * and the strict reading of a reply against that same zod schema.
 *
 * The schema sent as `response_format` is the zod schema's JSON Schema made acceptable to the
 * strictest endpoints (OpenAI's strict mode): the root must be an object (a union of actions is
 * wrapped as {"action": ...}), and keywords those endpoints refuse (maxLength, pattern...) are
 * left out of what is sent; they still apply, since the reply is checked with zod. `strict` is
 * asked for only when every object is closed and lists all its properties as required.
 */
import { z } from "zod";

export interface ResponseSchema {
  readonly name: string;
  /** What is sent (and shown in the prompt). */
  readonly schema: Record<string, unknown>;
  readonly strict: boolean;
  /** The reply is {"action": <value>} (the zod schema's root is not an object). */
  readonly wrapped: boolean;
  readonly zod: z.ZodType;
}

// The JSON Schema keywords every structured-output endpoint accepts.
const KEPT = new Set(["type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "description", "title", "$defs", "$ref"]);

const cache = new WeakMap<z.ZodType, ResponseSchema>();

export function responseSchema(name: string, schema: z.ZodType): ResponseSchema {
  const hit = cache.get(schema);
  if (hit && hit.name === name) return hit;
  const full = z.toJSONSchema(schema, { unrepresentable: "any" }) as Record<string, unknown>;
  let js = portable(full) as Record<string, unknown>;
  // oneOf (what discriminated unions become) means anyOf here: the branches never overlap.
  const wrapped = js.type !== "object";
  if (wrapped) js = { type: "object", properties: { action: js }, required: ["action"], additionalProperties: false };
  const out: ResponseSchema = { name, schema: js, strict: closed(js), wrapped, zod: schema };
  cache.set(schema, out);
  return out;
}

/** The `response_format` field for a request. */
export function responseFormat(kind: "json_schema" | "json_object" | "text", rs: ResponseSchema): unknown {
  if (kind === "text") return undefined;
  if (kind === "json_object") return { type: "json_object" };
  return { type: "json_schema", json_schema: { name: rs.name, schema: rs.schema, strict: rs.strict } };
}

function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === "oneOf") out.anyOf = portable(v);
    else if (k === "properties" || k === "$defs") out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([p, s]) => [p, portable(s)]));
    else if (KEPT.has(k)) out[k] = portable(v);
  }
  return out;
}

/** Every object closed, every property required: what strict structured output needs. */
function closed(node: unknown): boolean {
  if (Array.isArray(node)) return node.every(closed);
  if (!node || typeof node !== "object") return true;
  const n = node as Record<string, unknown>;
  if (n.type === "object") {
    const props = Object.keys((n.properties as Record<string, unknown> | undefined) ?? {});
    const required = new Set((n.required as string[] | undefined) ?? []);
    if (n.additionalProperties !== false || props.some((p) => !required.has(p))) return false;
  }
  return Object.entries(n).every(([k, v]) => (k === "properties" || k === "$defs" ? Object.values(v as object).every(closed) : closed(v)));
}

export type Read<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Strict: the reply must be one JSON document (alone, or as the only thing in a ```json fence),
 * and it must satisfy the zod schema with no unknown keys. `lenient` (plain-text endpoints) also
 * takes the first {...} found in the text.
 */
export function readStructured<T>(text: string, rs: ResponseSchema, opts: { lenient?: boolean } = {}): Read<T> {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(trimmed)?.[1];
  let json: unknown;
  let parsed = false;
  let parseError = "";
  for (const candidate of [fenced ?? trimmed, ...(opts.lenient ? [trimmed.match(/\{[\s\S]*\}/)?.[0]] : [])]) {
    if (candidate === undefined) continue;
    try {
      json = JSON.parse(candidate);
      parsed = true;
      break;
    } catch (err) {
      parseError ||= (err as Error).message;
    }
  }
  if (!parsed) return { ok: false, error: `the reply is not valid JSON (${parseError}): ${JSON.stringify(trimmed.slice(0, 160))}` };
  if (rs.wrapped) {
    if (!json || typeof json !== "object" || Array.isArray(json) || !("action" in json)) return { ok: false, error: 'the reply must be a JSON object {"action": ...}' };
    const keys = Object.keys(json);
    if (keys.length !== 1) return { ok: false, error: `unknown keys beside "action": ${keys.filter((k) => k !== "action").join(", ")}` };
    json = (json as { action: unknown }).action;
  }
  const schema = rs.zod instanceof z.ZodObject ? rs.zod.strict() : rs.zod;
  const r = schema.safeParse(json);
  if (!r.success) return { ok: false, error: `the reply does not match the schema: ${z.prettifyError(r.error).replace(/\n/g, "; ")}` };
  return { ok: true, value: r.data as T };
}
