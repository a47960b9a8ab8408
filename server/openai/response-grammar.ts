/**
 * `response_format` enforced while sampling, with `strict: true` semantics whatever the request
 * says: `json_schema` compiles the schema (models/grammar), `json_object` allows any JSON object
 * (values nested at most 4 deep), both with flexible whitespace (a served model writes JSON as it
 * learned to: compact, with a space after `:` and `,`, or indented); the sampler then only draws tokens that
 * keep the reply a prefix of a matching text, finishing within max_tokens. A schema the compiler
 * cannot enforce, or a token budget too small for it, is refused up front (400, naming the part
 * at fault) rather than ignored. The format check (format-check.ts) still runs on every reply: a
 * stop string can cut a reply short.
 *
 * Compiled grammars are kept per tokenizer, by schema (clients send the same schema request after
 * request).
 */
import { compileConstraint, GrammarError, type ConstraintSpec, type TokenAutomaton } from "../../models/grammar/index.js";
import { grammarVocabulary } from "../../agents/policy/action-grammar.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import { OpenAiError } from "./errors.js";
import type { ResponseFormat } from "./schemas.js";

const CACHE_SIZE = 32;
/** Larger schemas are refused before compiling (which holds the model's thread while it runs). */
const MAX_SCHEMA_CHARS = 64 * 1024;
/** json_object: how deep values may nest. */
const OBJECT_DEPTH = 4;

const caches = new WeakMap<PolicyTokenizer, Map<string, TokenAutomaton>>();

/** The grammar a request's replies must follow, or undefined for plain text. */
export function responseGrammar(format: ResponseFormat | null | undefined, tokenizer: PolicyTokenizer): TokenAutomaton | undefined {
  if (!format || format.type === "text") return undefined;
  const param = format.type === "json_schema" ? "response_format.json_schema.schema" : "response_format";
  let spec: ConstraintSpec;
  if (format.type === "json_object" || format.json_schema.schema === undefined) spec = { type: "json_object", whitespace: "flexible", depth: OBJECT_DEPTH };
  else spec = { type: "json_schema", schema: format.json_schema.schema, whitespace: "flexible" };
  const key = JSON.stringify(spec);
  if (key.length > MAX_SCHEMA_CHARS) throw new OpenAiError(400, `${param}: the schema is too large to enforce (over ${MAX_SCHEMA_CHARS} characters)`, { param });
  let cache = caches.get(tokenizer);
  if (!cache) caches.set(tokenizer, (cache = new Map()));
  let automaton = cache.get(key);
  if (automaton) cache.delete(key);
  else {
    try {
      automaton = compileConstraint(spec, grammarVocabulary(tokenizer));
    } catch (err) {
      if (err instanceof GrammarError) {
        const at = err.pointer ? `${param}${err.pointer}` : param;
        throw new OpenAiError(400, `${at}: this server cannot enforce the schema: ${err.reason}`, { param: at });
      }
      throw err;
    }
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  }
  cache.set(key, automaton);
  return automaton;
}

/** Refuses a token budget in which a matching reply might not fit. */
export function checkBudget(automaton: TokenAutomaton, maxTokens: number, param: string): void {
  if (automaton.minBudget > maxTokens)
    throw new OpenAiError(400, `${param}: ${maxTokens} tokens may be too few for a reply that matches response_format (it can take up to ${automaton.minBudget})`, { param });
}
