/**
 * JSON Schema (draft 2020-12, the subset that zod's toJSONSchema writes and that OpenAI's strict
 * `json_schema` response formats use) as the language of the JSON texts this project writes for
 * it. Every text of the language validates against the schema; not every valid text is in it,
 * because the output is written one way:
 *
 * - whitespace: `compact` (the default, as JSON.stringify writes, and so as the project's
 *   policies learn actions from actionText): none anywhere; `flexible` (for models trained on
 *   other people's JSON, as /v1 serves): nothing, one space, or a newline and up to 20 spaces or
 *   tabs of indentation, after `{ [ , :` and before `} ] , :`, never before the first character
 *   or after the last;
 * - an object's properties in the schema's order (required ones always, optional ones or not);
 *   no properties beyond the declared ones, unless the object is a record (no `properties`,
 *   `additionalProperties` a schema or true), whose entries are free keys;
 * - strings escaped as JSON.stringify escapes them, lengths counted in UTF-16 units;
 * - numbers without exponent and with at most 15 digits, integers within the safe range
 *   (numbers.ts).
 *
 * Supported: type (one or several), enum, const, properties, required, additionalProperties,
 * propertyNames (records), items, prefixItems, minItems, maxItems, minLength, maxLength, pattern
 * (regex.ts), format (date, date-time, time, email, uuid, ipv4, ipv6), minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum, anyOf, oneOf (when its alternatives cannot overlap: they
 * differ in type or in a required property's const/enum values), allOf of one schema, $ref to
 * the document's own parts ($defs, definitions, any JSON pointer, "#") down to a depth, nullable
 * (OpenAPI), and annotations, which are ignored. Anything else is refused with its JSON pointer.
 */
import { z } from "zod";
import { ANY, minus, type CharSet } from "./charset.js";
import { childPointer, GrammarError } from "./errors.js";
import { alt, chars, EMPTY, list, literal, NEVER, object, rep, seq, text, type Lang, type Member } from "./language.js";
import { numberLang, type Bound } from "./numbers.js";
import { BMP, regexLang } from "./regex.js";

export type Whitespace = "compact" | "flexible";

export interface JsonSchemaOptions {
  /** Where whitespace may go (default compact: nowhere). */
  readonly whitespace?: Whitespace;
  /** How many times a $ref may be followed within its own expansion before that branch is cut (default 3). */
  readonly maxRefDepth?: number;
  /** Nesting of values a schema leaves free (`{}`, `true`, records of anything) (default 3). */
  readonly freeDepth?: number;
}

const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$comment",
  "$anchor",
  "$defs",
  "definitions",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentEncoding",
  "contentMediaType",
]);

const KNOWN = new Set([
  "type",
  "enum",
  "const",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "unevaluatedProperties",
  "items",
  "prefixItems",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "anyOf",
  "oneOf",
  "allOf",
  "$ref",
  "nullable",
  "minProperties",
  "maxProperties",
]);

const TYPES = ["null", "boolean", "object", "array", "number", "integer", "string"] as const;
type JsonType = (typeof TYPES)[number];

/** Keywords that imply a type when `type` is absent. */
const IMPLIES: Readonly<Record<string, JsonType>> = {
  properties: "object",
  required: "object",
  additionalProperties: "object",
  propertyNames: "object",
  minProperties: "object",
  maxProperties: "object",
  items: "array",
  prefixItems: "array",
  minItems: "array",
  maxItems: "array",
  minLength: "string",
  maxLength: "string",
  pattern: "string",
  format: "string",
  minimum: "number",
  maximum: "number",
  exclusiveMinimum: "number",
  exclusiveMaximum: "number",
};

/** Every character a JSON string may hold (surrogates are not characters). */
const STRING_CHARS: CharSet = minus(ANY, [[0xd800, 0xdfff]]);

/** Formats written as patterns whose strings zod's format checks accept too. */
const FORMAT_PATTERNS: Readonly<Record<string, () => z.ZodType>> = {
  date: () => z.iso.date(),
  "date-time": () => z.iso.datetime({ offset: true }),
  email: () => z.email(),
  uuid: () => z.uuid(),
  guid: () => z.uuid(),
  ipv4: () => z.ipv4(),
  ipv6: () => z.ipv6(),
};
const TIME_PATTERN = "^(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$";

function formatPattern(format: string): string | undefined {
  if (format === "time") return TIME_PATTERN;
  const make = FORMAT_PATTERNS[format];
  if (!make) return undefined;
  const p = (z.toJSONSchema(make()) as { pattern?: string }).pattern;
  if (!p) throw new Error(`internal error: zod wrote no pattern for format ${format}`);
  return p;
}

type Schema = boolean | Record<string, unknown>;

/** The whitespace allowed between two JSON tokens. */
function wsLang(whitespace: Whitespace): Lang {
  return whitespace === "compact" ? EMPTY : alt(EMPTY, literal(" "), seq(literal("\n"), rep(chars([[0x09, 0x09], [0x20, 0x20]]), 0, 20)));
}

export function jsonSchemaLang(schema: unknown, opts: JsonSchemaOptions = {}): Lang {
  const c = new SchemaCompiler(schema, opts.maxRefDepth ?? 3, opts.freeDepth ?? 3, wsLang(opts.whitespace ?? "compact"));
  const l = c.compile(schema, "", []);
  if (l.k === "never") throw new GrammarError("the schema allows no value that can be written (within its $ref depth)", "");
  return l;
}

/** Any JSON value, nested at most `depth` deep (the language of `{}` and of json_object's values). */
export function freeValue(depth: number, ws: Lang = EMPTY): Lang {
  const scalar = alt(freeString(), numberLang(undefined, undefined, false, ""), literal("true"), literal("false"), literal("null"));
  if (depth <= 0) return alt(scalar, seq(literal("{"), ws, literal("}")), seq(literal("["), ws, literal("]")));
  const inner = freeValue(depth - 1, ws);
  return alt(scalar, object([], ws, { key: freeString(), value: inner }), arrayOf(() => inner, 0, Infinity, 0, ws));
}

/** Any JSON object, its values nested at most `depth` deep (json_object). */
export function freeObject(depth: number, whitespace: Whitespace = "compact"): Lang {
  const ws = wsLang(whitespace);
  return object([], ws, { key: freeString(), value: freeValue(depth - 1, ws) });
}

function freeString(pointer = ""): Lang {
  return text(rep(chars(STRING_CHARS), 0, Infinity), 0, Infinity, true, pointer);
}

/** `[` items `]`: item(i) for the i-th, between min and max of them; `ws` between tokens. */
function arrayOf(item: (i: number) => Lang, min: number, max: number, fixed: number, ws: Lang): Lang {
  const comma = seq(ws, literal(","), ws);
  // Items past `fixed` share one schema: written as a list.
  const tail = (i: number): Lang => {
    if (i >= fixed) return seq(comma, list(item(i), comma, Math.max(1, min - i), max === Infinity ? Infinity : max - i));
    return alt(i >= min ? EMPTY : NEVER, i < max ? seq(comma, item(i), tail(i + 1)) : NEVER);
  };
  const body = fixed === 0 ? list(item(0), comma, min, max) : alt(min === 0 ? EMPTY : NEVER, max > 0 ? seq(item(0), tail(1)) : NEVER);
  return seq(literal("["), ws, body, ws, literal("]"));
}

class SchemaCompiler {
  constructor(
    private readonly root: unknown,
    private readonly maxRefDepth: number,
    private readonly freeDepth: number,
    private readonly ws: Lang,
  ) {}

  compile(schema: unknown, pointer: string, refs: readonly string[]): Lang {
    if (schema === true) return freeValue(this.freeDepth, this.ws);
    if (schema === false) return NEVER;
    if (schema === null || typeof schema !== "object" || Array.isArray(schema)) throw new GrammarError("a schema must be an object or a boolean", pointer);
    const s = schema as Record<string, unknown>;
    for (const key of Object.keys(s)) {
      if (!KNOWN.has(key) && !ANNOTATIONS.has(key)) throw new GrammarError(`the keyword "${key}" is not supported`, childPointer(pointer, key));
    }
    const constraints = Object.keys(s).filter((k) => !ANNOTATIONS.has(k));
    const nullable = s.nullable === true;
    const withNull = (l: Lang) => (nullable ? alt(l, literal("null")) : l);

    if ("$ref" in s) {
      const others = constraints.filter((k) => k !== "$ref");
      if (others.length) throw new GrammarError(`keywords beside $ref are not supported (${others.join(", ")})`, pointer);
      const ref = String(s.$ref);
      // A reference met again within its own expansion is recursion: cut after maxRefDepth rounds.
      if (refs.filter((r) => r === ref).length >= this.maxRefDepth) return NEVER;
      const target = this.resolve(s.$ref, childPointer(pointer, "$ref"));
      return this.compile(target.schema, target.pointer, [...refs, ref]);
    }
    if ("allOf" in s) {
      const all = this.list(s.allOf, childPointer(pointer, "allOf"));
      const others = constraints.filter((k) => k !== "allOf");
      if (all.length !== 1 || others.length) throw new GrammarError("allOf is supported only with one schema and nothing beside it", childPointer(pointer, "allOf"));
      return this.compile(all[0], childPointer(pointer, "allOf", 0), refs);
    }
    for (const key of ["anyOf", "oneOf"] as const) {
      if (!(key in s)) continue;
      const items = this.list(s[key], childPointer(pointer, key));
      const others = constraints.filter((k) => k !== key && k !== "nullable");
      if (others.length) throw new GrammarError(`keywords beside ${key} are not supported (${others.join(", ")})`, pointer);
      if (key === "oneOf") this.checkExclusive(items, childPointer(pointer, key));
      return withNull(alt(...items.map((it, i) => this.compile(it, childPointer(pointer, key, i), refs))));
    }
    if ("const" in s || "enum" in s) {
      const values = "const" in s ? [s.const] : this.list(s.enum, childPointer(pointer, "enum"));
      const others = constraints.filter((k) => k !== "const" && k !== "enum" && k !== "type" && k !== "nullable");
      if (others.length) throw new GrammarError(`keywords beside enum or const are not supported (${others.join(", ")})`, pointer);
      const types = "type" in s ? this.types(s.type, pointer) : undefined;
      const kept = values.filter((v) => !types || types.has(jsonType(v)) || (types.has("number") && jsonType(v) === "integer"));
      return withNull(alt(...kept.map((v) => literal(JSON.stringify(v)))));
    }
    let types: Set<JsonType>;
    if ("type" in s) types = this.types(s.type, pointer);
    else {
      types = new Set(constraints.map((k) => IMPLIES[k]).filter((t): t is JsonType => t !== undefined));
      if (types.size === 0) return withNull(freeValue(this.freeDepth, this.ws));
    }
    if (types.has("number")) types.delete("integer");
    const parts = [...types].map((t) => this.typed(t, s, pointer, refs));
    return withNull(alt(...parts));
  }

  private types(t: unknown, pointer: string): Set<JsonType> {
    const list = Array.isArray(t) ? t : [t];
    for (const x of list) if (!TYPES.includes(x as JsonType)) throw new GrammarError(`unknown type ${JSON.stringify(x)}`, childPointer(pointer, "type"));
    return new Set(list as JsonType[]);
  }

  private list(v: unknown, pointer: string): unknown[] {
    if (!Array.isArray(v) || v.length === 0) throw new GrammarError("must be a non-empty array", pointer);
    return v;
  }

  private typed(type: JsonType, s: Record<string, unknown>, pointer: string, refs: readonly string[]): Lang {
    switch (type) {
      case "null":
        return literal("null");
      case "boolean":
        return alt(literal("true"), literal("false"));
      case "integer":
      case "number":
        return this.number(s, pointer, type === "integer");
      case "string":
        return this.string(s, pointer);
      case "array":
        return this.array(s, pointer, refs);
      case "object":
        return this.object(s, pointer, refs);
    }
  }

  private count(s: Record<string, unknown>, key: string, pointer: string): number | undefined {
    const v = s[key];
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new GrammarError("must be a nonnegative integer", childPointer(pointer, key));
    return v;
  }

  private number(s: Record<string, unknown>, pointer: string, integer: boolean): Lang {
    const num = (key: string): number | undefined => {
      const v = s[key];
      if (v === undefined) return undefined;
      if (typeof v === "boolean") throw new GrammarError("boolean exclusiveMinimum/exclusiveMaximum (draft 4) is not supported: give the bound as a number", childPointer(pointer, key));
      if (typeof v !== "number" || !Number.isFinite(v)) throw new GrammarError("must be a finite number", childPointer(pointer, key));
      return v;
    };
    if (s.multipleOf !== undefined && !(integer && s.multipleOf === 1)) throw new GrammarError("multipleOf is not supported", childPointer(pointer, "multipleOf"));
    const tighter = (a: Bound | undefined, b: Bound | undefined, low: boolean): Bound | undefined => {
      if (!a || !b) return a ?? b;
      if (a.value !== b.value) return (a.value > b.value) === low ? a : b;
      return a.inclusive ? b : a;
    };
    const bound = (key: string, inclusive: boolean): Bound | undefined => {
      const v = num(key);
      return v === undefined ? undefined : { value: v, inclusive };
    };
    const lo = tighter(bound("minimum", true), bound("exclusiveMinimum", false), true);
    const hi = tighter(bound("maximum", true), bound("exclusiveMaximum", false), false);
    return numberLang(lo, hi, integer, pointer);
  }

  private string(s: Record<string, unknown>, pointer: string): Lang {
    const min = this.count(s, "minLength", pointer) ?? 0;
    const max = this.count(s, "maxLength", pointer) ?? Infinity;
    let pattern = s.pattern as string | undefined;
    if (pattern !== undefined && typeof pattern !== "string") throw new GrammarError("must be a string", childPointer(pointer, "pattern"));
    if (s.format !== undefined) {
      const p = formatPattern(String(s.format));
      if (p === undefined) throw new GrammarError(`the format "${String(s.format)}" is not supported (supported: date, date-time, time, email, uuid, ipv4, ipv6)`, childPointer(pointer, "format"));
      if (pattern !== undefined && pattern !== p) throw new GrammarError("a pattern beside a format is supported only when it is the format's own pattern", childPointer(pointer, "pattern"));
      pattern = p;
    }
    const body = pattern === undefined ? rep(chars(STRING_CHARS), 0, Infinity) : regexLang(pattern, childPointer(pointer, pattern === s.pattern ? "pattern" : "format"), BMP);
    const l = text(body, min, max, true, pointer);
    if (l.k === "never") throw new GrammarError(`no string satisfies minLength ${min} and maxLength ${max}`, pointer);
    return l;
  }

  private array(s: Record<string, unknown>, pointer: string, refs: readonly string[]): Lang {
    let min = this.count(s, "minItems", pointer) ?? 0;
    let max = this.count(s, "maxItems", pointer) ?? Infinity;
    let prefix: unknown[] = [];
    let items: unknown = s.items ?? true;
    if (Array.isArray(s.items)) {
      // Draft 7's tuple form.
      prefix = s.items;
      items = false;
    }
    if (s.prefixItems !== undefined) {
      if (!Array.isArray(s.prefixItems)) throw new GrammarError("must be an array of schemas", childPointer(pointer, "prefixItems"));
      prefix = s.prefixItems;
    }
    if (s.uniqueItems === true && max > 1) throw new GrammarError("uniqueItems is supported only with maxItems 1", childPointer(pointer, "uniqueItems"));
    if (items === false) max = Math.min(max, prefix.length);
    if (min > max) throw new GrammarError(`no array has between ${min} and ${max} items here`, pointer);
    const prefixLangs = prefix.map((p, i) => this.compile(p, childPointer(pointer, Array.isArray(s.items) ? "items" : "prefixItems", i), refs));
    const rest = items === false ? NEVER : this.compile(items, childPointer(pointer, "items"), refs);
    // An item that cannot be written ends the array before it.
    const firstNever = [...prefixLangs, rest].findIndex((l) => l.k === "never");
    if (firstNever >= 0 && firstNever < max) max = firstNever;
    if (min > max) return NEVER;
    min = Math.min(min, max);
    return arrayOf((i) => (i < prefixLangs.length ? prefixLangs[i]! : rest), min, max, prefixLangs.length, this.ws);
  }

  private object(s: Record<string, unknown>, pointer: string, refs: readonly string[]): Lang {
    if (s.properties !== undefined && (s.properties === null || typeof s.properties !== "object" || Array.isArray(s.properties)))
      throw new GrammarError("must be an object of schemas", childPointer(pointer, "properties"));
    const props = (s.properties ?? {}) as Record<string, unknown>;
    const required = (s.required ?? []) as unknown;
    if (!Array.isArray(required) || required.some((r) => typeof r !== "string")) throw new GrammarError("must be an array of property names", childPointer(pointer, "required"));
    const additional = s.additionalProperties ?? true;
    if (s.unevaluatedProperties !== undefined && s.unevaluatedProperties !== false) throw new GrammarError("only unevaluatedProperties: false is supported", childPointer(pointer, "unevaluatedProperties"));
    const members: Member[] = Object.entries(props).map(([key, sub]) => ({
      key: JSON.stringify(key),
      value: this.compile(sub, childPointer(pointer, "properties", key), refs),
      required: required.includes(key),
    }));
    for (const key of required as string[]) {
      if (key in props) continue;
      if (additional === false || s.unevaluatedProperties === false) throw new GrammarError(`the required property "${key}" is not allowed (additionalProperties is false)`, childPointer(pointer, "required"));
      members.push({ key: JSON.stringify(key), value: this.compile(additional, childPointer(pointer, "additionalProperties"), refs), required: true });
    }
    const minProps = this.count(s, "minProperties", pointer);
    const maxProps = this.count(s, "maxProperties", pointer);
    const isRecord = Object.keys(props).length === 0 && additional !== false && s.unevaluatedProperties !== false;
    if (minProps !== undefined && minProps > members.filter((m) => m.required).length) throw new GrammarError("minProperties above the number of required properties is not supported", childPointer(pointer, "minProperties"));
    if (maxProps !== undefined && (maxProps < members.length || isRecord)) throw new GrammarError("maxProperties below the number of declared properties (or on a record) is not supported", childPointer(pointer, "maxProperties"));
    if (s.propertyNames !== undefined && !isRecord && !(typeof s.propertyNames === "object" && JSON.stringify(s.propertyNames) === '{"type":"string"}'))
      throw new GrammarError("propertyNames is supported only on records (objects without properties)", childPointer(pointer, "propertyNames"));
    if (!isRecord) return object(members, this.ws);
    const keySchema = s.propertyNames ?? { type: "string" };
    const key = this.compile(keySchema, childPointer(pointer, "propertyNames"), refs);
    const value = this.compile(additional, childPointer(pointer, "additionalProperties"), refs);
    return object(members, this.ws, { key, value });
  }

  private resolve(ref: unknown, pointer: string): { schema: unknown; pointer: string } {
    if (typeof ref !== "string" || !ref.startsWith("#")) throw new GrammarError("only references within the schema (#...) are supported", pointer);
    const path = ref.slice(1);
    if (path !== "" && !path.startsWith("/")) throw new GrammarError(`cannot resolve ${JSON.stringify(ref)} (anchors are not supported)`, pointer);
    let at: unknown = this.root;
    for (const raw of path === "" ? [] : path.slice(1).split("/")) {
      const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      if (at === null || typeof at !== "object" || !(key in (at as object))) throw new GrammarError(`cannot resolve ${JSON.stringify(ref)}`, pointer);
      at = (at as Record<string, unknown>)[key];
    }
    return { schema: at, pointer: path };
  }

  /**
   * oneOf means exactly one alternative matches: written as anyOf, which is right only when no
   * value can match two of them. Proven here for alternatives of different types, and for
   * objects told apart by a required property whose const/enum values differ (a discriminated
   * union); anything else is refused rather than risked.
   */
  private checkExclusive(items: unknown[], pointer: string): void {
    const info = items.map((it) => this.shape(it));
    for (let i = 0; i < items.length; i++) {
      for (let j = i + 1; j < items.length; j++) {
        const a = info[i]!;
        const b = info[j]!;
        if (a.types && b.types && ![...a.types].some((t) => b.types!.has(t) || (t === "integer" && b.types!.has("number")) || (t === "number" && b.types!.has("integer")))) continue;
        if (a.tags && b.tags && [...a.tags.keys()].some((k) => b.tags!.has(k) && !a.tags!.get(k)!.some((v) => b.tags!.get(k)!.includes(v)))) continue;
        throw new GrammarError(`oneOf alternatives ${i} and ${j} may both match a value; use anyOf, or tell them apart by type or by a required property's const values`, pointer);
      }
    }
  }

  /** What can be told of a schema without compiling it: its types, and its required properties' const/enum values. */
  private shape(schema: unknown): { types?: Set<JsonType>; tags?: Map<string, string[]> } {
    if (typeof schema !== "object" || schema === null) return {};
    let s = schema as Record<string, unknown>;
    for (let d = 0; typeof s.$ref === "string" && d < 16; d++) {
      const target = this.resolve(s.$ref, "");
      if (typeof target.schema !== "object" || target.schema === null) return {};
      s = target.schema as Record<string, unknown>;
    }
    if ("$ref" in s || "anyOf" in s || "oneOf" in s || "allOf" in s) return {};
    let types: Set<JsonType> | undefined;
    if ("const" in s || "enum" in s) types = new Set((("const" in s ? [s.const] : s.enum) as unknown[]).map(jsonType));
    else if ("type" in s) types = new Set((Array.isArray(s.type) ? s.type : [s.type]) as JsonType[]);
    if (types && s.nullable === true) types.add("null");
    let tags: Map<string, string[]> | undefined;
    const props = s.properties as Record<string, Record<string, unknown>> | undefined;
    const required = Array.isArray(s.required) ? (s.required as string[]) : [];
    if (props && types?.size === 1 && types.has("object")) {
      tags = new Map();
      for (const key of required) {
        const p = props[key];
        if (p && typeof p === "object" && ("const" in p || "enum" in p) && p.nullable !== true) tags.set(key, (("const" in p ? [p.const] : p.enum) as unknown[]).map((v) => JSON.stringify(v)));
      }
    }
    return { ...(types ? { types } : {}), ...(tags ? { tags } : {}) };
  }
}

function jsonType(v: unknown): JsonType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v as JsonType;
}
