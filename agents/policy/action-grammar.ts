/**
 * The grammar a policy writes a turn's action in, compiled for its tokenizer: what `actionText`
 * writes and `parseAction` reads back, so that every sampled action parses and validates.
 *
 * - `schema` (the default): the action schema's JSON (compact, models/grammar/json-schema.ts);
 *   an action with a single free string field (the question world's answer) is written bare, as
 *   actionText writes it, as one line of text of at most its maxLength, unless the question's
 *   answer has a grammar of its own (its AnswerForm: JSON of the social world's reaction on the
 *   asked item, usersim's tagged reply's pattern), which it is then written in.
 * - `options`: one of the actions the world lists as valid now (as actionText writes each, or its
 *   JSON where parseAction would not read that back), which also keeps to what the world's state
 *   allows; the schema when the world lists none.
 * - `off`: no grammar.
 *
 * A question asked over a compact socialized context is answered by citing one of its lines
 * (`citationSpec`), in every mode but `off`; one whose context the policy writes, in the world's
 * pattern of a written context (`writtenSpec`).
 *
 * Compiled automata are kept per tokenizer and grammar (the worlds hand out the same schemas turn
 * after turn).
 */
import { z } from "zod";
import { compileConstraint, GrammarError, Vocabulary, type ConstraintSpec, type TokenAutomaton } from "../../models/grammar/index.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import { actionText, parseAction } from "./action.js";
import { citations, type CompactLine } from "../../worlds/core/compact-context.js";
import type { WrittenContext } from "../../worlds/core/written-context.js";
import type { ConstrainMode } from "./options.js";
import type { AnswerForm } from "../../worlds/question/world.js";


const CACHE_SIZE = 64;
/** Compiled grammars, and the grammars that cannot compile (their error, thrown again). */
const caches = new WeakMap<PolicyTokenizer, Map<string, TokenAutomaton | GrammarError>>();

const vocabularies = new WeakMap<PolicyTokenizer, Vocabulary>();

/** A tokenizer's vocabulary as the grammars read it (its trie built once). */
export function grammarVocabulary(tokenizer: PolicyTokenizer): Vocabulary {
  let v = vocabularies.get(tokenizer);
  if (!v) vocabularies.set(tokenizer, (v = new Vocabulary(tokenizer.vocabulary())));
  return v;
}

/** The grammar spec of an action (undefined: `off`); `answerForm`: the grammar a bare answer is written in (the question's). */
export function actionSpec(schema: z.ZodType, options: readonly unknown[] | undefined, mode: ConstrainMode, answerForm?: AnswerForm): ConstraintSpec | undefined {
  if (mode === "off") return undefined;
  if (mode === "options" && options && options.length > 0) return { type: "choice", choices: [...new Set(options.map((o) => optionText(o, schema)))] };
  const json = z.toJSONSchema(schema) as Record<string, unknown>;
  const bare = bareStringField(json);
  if (bare && answerForm) return answerFormSpec(answerForm);
  if (bare?.pattern !== undefined) return { type: "regex", pattern: bare.pattern };
  // One line of at least one character, as actionText writes an answer and the trainer's strict
  // format reads one.
  if (bare) return { type: "text", minLength: 1, singleLine: true, ...(bare.maxLength !== undefined ? { maxLength: bare.maxLength } : {}) };
  return { type: "json_schema", schema: json };
}

/**
 * The grammar of an answer form. A pattern is written as a RegExp writes its source (zod's JSON
 * Schema escapes slashes so), the spec the free answer held to that pattern compiles to
 * (answerGrammarSchema: what GRPO samples under), so both share one compiled automaton.
 */
export function answerFormSpec(form: AnswerForm): ConstraintSpec {
  return form.type === "json" ? { type: "json_schema", schema: form.schema } : { type: "regex", pattern: new RegExp(form.pattern).source };
}

/** The compiled grammar of an action for a tokenizer (cached). */
export function actionConstraint(
  tokenizer: PolicyTokenizer,
  schema: z.ZodType,
  options: readonly unknown[] | undefined,
  mode: ConstrainMode,
  answerForm?: AnswerForm,
): TokenAutomaton | undefined {
  const spec = actionSpec(schema, options, mode, answerForm);
  return spec && compiledConstraint(tokenizer, spec);
}

/**
 * The grammar of a reply that cites one line of a compact socialized context (its title, then its
 * value: worlds/core/compact-context.ts): exactly one of the lines (by its title or an alias),
 * whatever the mode but `off`.
 */
export function citationSpec(lines: readonly CompactLine[], mode: ConstrainMode): ConstraintSpec | undefined {
  return mode === "off" ? undefined : { type: "choice", choices: [...new Set(lines.flatMap(citations))] };
}

/**
 * The grammar of a reply that writes a context and then answers (worlds/core/written-context.ts):
 * the world's pattern, trace lines over the story's places and agents and an answer line valued
 * with one of its containers, whatever the mode but `off`.
 */
export function writtenSpec(written: WrittenContext, mode: ConstrainMode): ConstraintSpec | undefined {
  return mode === "off" ? undefined : { type: "regex", pattern: written.pattern };
}

/**
 * A grammar compiled for a tokenizer, kept while it is among the last few used (the worlds hand
 * out the same schemas turn after turn). A grammar that cannot compile is remembered by its error:
 * every request of a batch asks for the same one, and a compile can take seconds before it fails.
 */
export function compiledConstraint(tokenizer: PolicyTokenizer, spec: ConstraintSpec): TokenAutomaton {
  let cache = caches.get(tokenizer);
  if (!cache) caches.set(tokenizer, (cache = new Map()));
  const key = JSON.stringify(spec);
  let entry = cache.get(key);
  if (entry) {
    cache.delete(key);
  } else {
    try {
      entry = compileConstraint(spec, grammarVocabulary(tokenizer));
    } catch (err) {
      if (!(err instanceof GrammarError)) throw err;
      entry = err;
    }
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  cache.set(key, entry);
  if (entry instanceof GrammarError) throw entry;
  return entry;
}

/**
 * The budget that keeps every option of a `choice` grammar reachable: its longest text in UTF-8
 * bytes (no token is shorter than a byte). The automaton's own minBudget is the shortest way to
 * finish, and a budget between the two silently drops the longer options (a ToMi agent at
 * `max_new_tokens=8` could only ever write `{"type":"none"}`); 0 for other grammars.
 */
export function choiceBudget(spec: ConstraintSpec | undefined): number {
  if (spec?.type !== "choice") return 0;
  return Math.max(0, ...spec.choices.map((c) => Buffer.byteLength(c, "utf8")));
}

/** actionText's writing of an option when parseAction reads it back as that option (a union's bare `none` it does not), else its JSON. */
function optionText(option: unknown, schema: z.ZodType): string {
  const text = actionText(option);
  try {
    if (JSON.stringify(parseAction(text, schema)) === JSON.stringify(option)) return text;
  } catch {
    // not readable bare
  }
  return JSON.stringify(option);
}

/**
 * An object with one required string property and no other rule than a maximum length: its
 * text is the string itself (parseAction reads any trimmed text as that field, and trimming only
 * shortens it). A minimum length or enum could be broken by the trimming: those are written as
 * JSON. So is a pattern, unless it is anchored at both ends (`^...$`, a benchmark's answer form:
 * usersim's tagged reply): its texts are written bare under the pattern itself (the maximum
 * length is then the token budget's), and the schema checks the trimmed text again when it is
 * read back. (The project's anchored answer patterns begin and end with a tag, not a space.)
 */
function bareStringField(json: Record<string, unknown>): { maxLength?: number; pattern?: string } | undefined {
  const props = json.properties as Record<string, Record<string, unknown>> | undefined;
  if (json.type !== "object" || !props) return undefined;
  const keys = Object.keys(props);
  if (keys.length !== 1 || !(json.required as string[] | undefined)?.includes(keys[0]!)) return undefined;
  const field = props[keys[0]!]!;
  const rules = Object.keys(field).filter((k) => k !== "description" && k !== "title");
  const pattern = typeof field.pattern === "string" && /^\^[\s\S]*[^\\]\$$/.test(field.pattern) ? field.pattern : undefined;
  if (field.type !== "string" || rules.some((k) => k !== "type" && k !== "maxLength" && !(k === "pattern" && pattern))) return undefined;
  return { ...(typeof field.maxLength === "number" ? { maxLength: field.maxLength } : {}), ...(pattern ? { pattern } : {}) };
}
