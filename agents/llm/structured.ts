/**
 * Structured output: the JSON schema a reply must match, derived from the world's zod schema,
 * and the strict reading of a reply against that same zod schema.
 *
 * The schema sent as `response_format` is the zod schema's JSON Schema made acceptable to the
 * strictest endpoints (OpenAI's strict mode): the root must be an object (a union of actions is
 * wrapped as {"action": ...}), and only the keywords in KEPT are sent. Every other keyword is left
 * out, among them every bound: minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf,
 * minLength, maxLength, pattern, format, minItems, maxItems, prefixItems (a tuple is sent as an
 * array of any of its positions' schemas), propertyNames, default.
 * So an endpoint may return a number out of its range or a text too long; such a reply is still
 * refused, since it is read with the full zod schema (readStructured), its error naming the field
 * and the bound ("Too big: expected number to be <=1 at work"), and the agent asks once more or
 * falls back as for any reply it cannot read. `strict` is asked for only when every object is
 * closed and lists all its properties as required.
 *
 * A question whose answer is JSON of a schema of its own (a task's `json` AnswerForm: the social
 * world's reaction) is asked in that schema (answerResponseSchema), always strict: wrapped as
 * {"answer": ...}, each optional property required and nullable (strict mode's way to leave one
 * out: a null is dropped before the check), consts as one-value enums.
 */
import { z } from "zod";

export interface ResponseSchema {
  readonly name: string;
  /** What is sent (and shown in the prompt). */
  readonly schema: Record<string, unknown>;
  readonly strict: boolean;
  /** The reply is {"action": <value>} (the zod schema's root is not an object); `key` names another key. */
  readonly wrapped: boolean;
  readonly key?: string;
  /** A null stands for a property left out (strict mode's optional property): dropped before the check. */
  readonly nullsOmitted?: boolean;
  readonly zod: z.ZodType;
}

// The JSON Schema keywords every structured-output endpoint accepts; the others are not sent (see above).
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

const answerSchemas = new WeakMap<object, ResponseSchema>();

/**
 * The response schema of an answer that is JSON of `schema` (a task's `json` AnswerForm), in the
 * form OpenAI's strict mode takes; the reply is checked against the whole schema (z.fromJSONSchema).
 */
export function answerResponseSchema(schema: Readonly<Record<string, unknown>>): ResponseSchema {
  const hit = answerSchemas.get(schema);
  if (hit) return hit;
  let js = constsAsEnums(portable(schema)) as Record<string, unknown>;
  // Where the schema takes no null anywhere, a null can only mean "left out".
  const nullsOmitted = !takesNull(js);
  if (nullsOmitted) js = nullableOptionals(js) as Record<string, unknown>;
  const wrapped = js.type !== "object";
  if (wrapped) js = { type: "object", properties: { answer: js }, required: ["answer"], additionalProperties: false };
  const zod = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  const out: ResponseSchema = { name: "answer", schema: js, strict: closed(js), wrapped, ...(wrapped ? { key: "answer" } : {}), nullsOmitted, zod };
  answerSchemas.set(schema, out);
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
  const n = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(n)) {
    if (k === "oneOf") out.anyOf = portable(v);
    else if (k === "properties" || k === "$defs") out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([p, s]) => [p, portable(s)]));
    else if (KEPT.has(k)) out[k] = portable(v);
  }
  // A tuple (prefixItems, then `items: false` or the rest's schema): without prefixItems, `items:
  // false` would allow only the empty array. Sent as an array of any of its positions' schemas;
  // each position's own schema and the length are checked by the full zod schema.
  if (Array.isArray(n.prefixItems)) {
    const kinds = [...n.prefixItems, ...(n.items && typeof n.items === "object" ? [n.items] : [])].map(portable);
    out.items = kinds.length === 1 ? kinds[0] : { anyOf: kinds };
  }
  return out;
}

function constsAsEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(constsAsEnums);
  if (!node || typeof node !== "object") return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === "const") out.enum = [v];
    else if (k === "properties" || k === "$defs") out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([p, sub]) => [p, constsAsEnums(sub)]));
    else out[k] = constsAsEnums(v);
  }
  return out;
}

function takesNull(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(takesNull);
  if (!node || typeof node !== "object") return false;
  const n = node as Record<string, unknown>;
  if (n.type === "null" || (Array.isArray(n.type) && n.type.includes("null")) || n.nullable === true) return true;
  if (Array.isArray(n.enum) && n.enum.includes(null)) return true;
  // A free schema ({}, or no type) takes null too.
  if (n.type === undefined && !n.anyOf && !n.enum && !n.$ref) return true;
  return Object.entries(n).some(([k, v]) => (k === "properties" || k === "$defs" ? Object.values(v as object).some(takesNull) : k !== "enum" && typeof v === "object" && takesNull(v)));
}

/** Every object's optional properties made required and nullable. */
function nullableOptionals(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableOptionals);
  if (!node || typeof node !== "object") return node;
  const n = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(n)) {
    if (k === "properties" || k === "$defs") out[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([p, sub]) => [p, nullableOptionals(sub)]));
    else out[k] = nullableOptionals(v);
  }
  if (n.type === "object" && n.properties) {
    const props = out.properties as Record<string, unknown>;
    const required = new Set((n.required as string[] | undefined) ?? []);
    for (const p of Object.keys(props)) if (!required.has(p)) props[p] = { anyOf: [props[p], { type: "null" }] };
    out.required = Object.keys(props);
  }
  return out;
}

/** A value with its objects' null-valued properties left out. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => (v === null ? [] : [[k, withoutNulls(v)]])));
}

/**
 * What a zod error says to fix. A union's own message ("Invalid input") says nothing: the
 * alternative the reply came closest to does (one whose literal values it has, with the fewest
 * issues); where it has none's, each alternative's literal.
 */
function mismatch(error: z.ZodError): string {
  const [only] = error.issues;
  if (error.issues.length !== 1 || only!.code !== "invalid_union" || only!.errors.length === 0) return z.prettifyError(error);
  const at = (issues: readonly z.core.$ZodIssue[]) => issues.map((i) => ({ ...i, path: [...only!.path, ...i.path] }));
  const fits = only!.errors.filter((issues) => !issues.some((i) => i.code === "invalid_value"));
  if (fits.length > 0) return z.prettifyError({ issues: at(fits.reduce((a, b) => (b.length < a.length ? b : a))) } as z.ZodError);
  const literals = only!.errors.map((issues) => z.prettifyError({ issues: at(issues.filter((i) => i.code === "invalid_value")) } as z.ZodError));
  return `none of the ${literals.length} alternatives: ${literals.join(" | ")}`;
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
    const key = rs.key ?? "action";
    const object = json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
    // A plain-text endpoint's model may write the value itself (as the question's prompt asks); else it is unwrapped.
    if (!(object && !(key in object) && opts.lenient)) {
      if (!object || !(key in object)) return { ok: false, error: `the reply must be a JSON object {"${key}": ...}` };
      const keys = Object.keys(object);
      if (keys.length !== 1) return { ok: false, error: `unknown keys beside "${key}": ${keys.filter((k) => k !== key).join(", ")}` };
      json = object[key];
    }
  }
  if (rs.nullsOmitted) json = withoutNulls(json);
  const schema = rs.zod instanceof z.ZodObject ? rs.zod.strict() : rs.zod;
  const r = schema.safeParse(json);
  if (!r.success) return { ok: false, error: `the reply does not match the schema: ${mismatch(r.error).replace(/\n/g, "; ")}` };
  return { ok: true, value: r.data as T };
}
