/**
 * The hierarchy of a simulated user's reply: the latent states it states first, in order, then the
 * response. Read from a file in HumanLM's layout (its `hierarchy_config/*.json`): one JSON object
 * whose keys, in file order, are the tags, each with
 *
 *   desc           what the tag holds (goes into the prompt and the judge's rubric)
 *   max_tokens     the generation budget for that tag (the sampler's per level; the schema and the
 *                  reply's grammar bound its characters)
 *   system_prompt  optional: a prompt file for generating that level alone, relative to the file
 *   threshold      optional, number or null: kept as given (HumanLM's own bookkeeping)
 *
 * `response` is the reply itself and comes last; a file without it gets the default one, and a file
 * with only `response` is the response-only recipe. Tag names are lowercase identifiers, because
 * they are written as `<name>...</name>` and matched exactly.
 */
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { DataError } from "../core/errors.js";
import { readTextInput } from "../core/text-input.js";
import { jsonError, valueAt } from "./json-error.js";

export const RESPONSE = "response";

export interface Dimension {
  readonly name: string;
  readonly desc: string;
  readonly maxTokens: number;
  /** Absolute path of the level's own system prompt, when the file names one. */
  readonly systemPrompt?: string;
  readonly threshold?: number | null;
}

export interface Hierarchy {
  /** The latent states, in the order they are written. */
  readonly states: readonly Dimension[];
  readonly response: Dimension;
  /** Where it came from ("default" or the file). */
  readonly source: string;
}

/**
 * A state's text is bounded in characters at 8 per token of its budget: generous for any
 * tokenizer of English (about 4 characters a token), and a bound on what a client may send.
 */
export const CHARS_PER_TOKEN = 8;

export function maxChars(d: Dimension): number {
  return d.maxTokens * CHARS_PER_TOKEN;
}

/** Every tag in writing order: the states, then `response`. */
export function tags(h: Hierarchy): string[] {
  return [...h.states.map((d) => d.name), h.response.name];
}

export function isResponseOnly(h: Hierarchy): boolean {
  return h.states.length === 0;
}

const NAME_RE = /^[a-z][a-z0-9_]*$/;
export const MAX_DIMENSIONS = 16;
/**
 * Every tag's `max_tokens` in all (the states' and the response's), at most: the reply's grammar
 * counts each text's characters up to its bound (a counter per text, replyTextPattern), and 3,072
 * tokens (24,576 characters) stay within what one grammar may count, whether they go to the
 * states or to the response, whose automaton is larger (the default's states take 288, its
 * response 512).
 */
export const MAX_TOKENS = 3072;

const EntrySchema = z.looseObject({
  desc: z.string({ error: "expected a string" }).trim().min(1, "is empty"),
  max_tokens: z.number({ error: "expected a positive integer" }).int("expected a positive integer").min(1, "expected a positive integer").max(32_768, "at most 32768"),
  system_prompt: z.string({ error: "expected a path (a string)" }).min(1, "is empty").optional(),
  threshold: z.number({ error: "expected a number or null" }).nullable().optional(),
});

const DEFAULT_RESPONSE = { desc: "The reply itself, exactly as the user would write it.", max_tokens: 512 };

/**
 * The six states of HumanLM's paper (stance, emotion, belief, value, goal, communication) and the
 * response, described in this project's own words. Stance, emotion, goal and communication name
 * their target or their parts, because the judge scores those parts.
 */
export const DEFAULT_HIERARCHY_JSON = {
  stance: {
    desc: "Where the user stands on each named target of the conversation, with strength: 'strongly agrees with X', 'somewhat disagrees with Y', 'is neutral on Z'. Always name the target; separate several with semicolons. At most 15 words.",
    max_tokens: 48,
  },
  emotion: {
    desc: "What the user feels, how strongly (mild, moderate, strong) and about what: 'strong frustration about X; mild hope for Y'. Emotion, intensity and target together; separate several with semicolons. At most 15 words.",
    max_tokens: 48,
  },
  belief: {
    desc: "A general assumption the user holds about how people or the world work, one that would explain this reply and others like it (not advice, not a claim about this case). At most 15 words.",
    max_tokens: 48,
  },
  value: {
    desc: "What the user thinks should matter or come first: a priority, not a fact. At most 15 words.",
    max_tokens: 48,
  },
  goal: {
    desc: "What the user is trying to achieve with this reply, and toward what or whom: persuade, support, ask, vent, mock, inform, share an experience. At most 15 words.",
    max_tokens: 48,
  },
  communication: {
    desc: "How the user writes this reply: its tone, then how it is built ('blunt, states a conclusion with little explanation'). At most 15 words.",
    max_tokens: 48,
  },
  response: DEFAULT_RESPONSE,
} as const;

export const DEFAULT_HIERARCHY: Hierarchy = parseHierarchy(DEFAULT_HIERARCHY_JSON, "default");

/** The response-only recipe: no states, the reply alone. */
export const RESPONSE_ONLY_HIERARCHY: Hierarchy = parseHierarchy({ response: DEFAULT_RESPONSE }, "response-only");

/** Reads a hierarchy file in HumanLM's layout. */
export function readHierarchyFile(file: string): Hierarchy {
  const text = readTextInput(file);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw jsonError(text, file, err as Error);
  }
  return parseHierarchy(json, file, dirname(resolve(file)));
}

/**
 * A hierarchy from its parsed JSON. `file` names it in errors; `dir` is where relative
 * `system_prompt` paths start (the file's folder).
 */
export function parseHierarchy(json: unknown, file: string, dir?: string): Hierarchy {
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new DataError(file, { field: "top level" }, `expected a JSON object of tags ({"stance": {"desc", "max_tokens"}, ...}), got ${Array.isArray(json) ? "an array" : json === null ? "null" : typeof json}`);
  }
  const names = Object.keys(json);
  if (names.length === 0) throw new DataError(file, { field: "top level" }, "no tags");
  if (names.length > MAX_DIMENSIONS + 1) throw new DataError(file, { field: "top level" }, `${names.length} tags: at most ${MAX_DIMENSIONS} states and the response`);
  const dims: Dimension[] = [];
  names.forEach((name, i) => {
    if (!NAME_RE.test(name)) throw new DataError(file, { field: name }, "a tag name must be a lowercase identifier (a-z, 0-9, _; starting with a letter)");
    // Tags are keys of plain objects: one that every object already has would read as present.
    if (name in Object.prototype) throw new DataError(file, { field: name }, `"${name}" cannot be a tag name`);
    if (name === RESPONSE && i !== names.length - 1) throw new DataError(file, { field: name }, `"response" must be the last tag (the reply is written from the states before it); it is tag ${i + 1} of ${names.length}`);
    const value = (json as Record<string, unknown>)[name];
    const entry = EntrySchema.safeParse(value);
    if (!entry.success) {
      const issue = entry.error.issues[0]!;
      const at = issue.path.length ? `${name}.${issue.path.join(".")}` : name;
      const missing = issue.code !== "unrecognized_keys" && valueAt(value, issue.path) === undefined;
      throw new DataError(file, { field: at }, missing ? "missing" : issue.path.length ? issue.message : `expected an object {"desc", "max_tokens"}`);
    }
    const e = entry.data;
    dims.push({
      name,
      desc: e.desc,
      maxTokens: e.max_tokens,
      ...(e.system_prompt !== undefined ? { systemPrompt: resolve(dir ?? ".", e.system_prompt) } : {}),
      ...(e.threshold !== undefined ? { threshold: e.threshold } : {}),
    });
  });
  const last = dims[dims.length - 1]!;
  const response = last.name === RESPONSE ? last : { name: RESPONSE, desc: DEFAULT_RESPONSE.desc, maxTokens: DEFAULT_RESPONSE.max_tokens };
  const states = last.name === RESPONSE ? dims.slice(0, -1) : dims;
  const total = [...states, response].reduce((sum, d) => sum + d.maxTokens, 0);
  if (total > MAX_TOKENS)
    throw new DataError(
      file,
      { field: "top level" },
      `the tags' max_tokens add up to ${total}${last.name === RESPONSE ? "" : ` (with the default response's ${response.maxTokens})`}: at most ${MAX_TOKENS} (the reply's grammar counts each text's characters, ${CHARS_PER_TOKEN} a token)`,
    );
  return { states, response, source: file };
}

/** The hierarchy as its file writes it (HumanLM's layout), e.g. for a run's record. */
export function hierarchyJson(h: Hierarchy): Record<string, { desc: string; max_tokens: number; threshold?: number | null }> {
  const out: Record<string, { desc: string; max_tokens: number; threshold?: number | null }> = {};
  for (const d of [...h.states, h.response]) out[d.name] = { desc: d.desc, max_tokens: d.maxTokens, ...(d.threshold !== undefined ? { threshold: d.threshold } : {}) };
  return out;
}

/** The system prompt file a level names, read; a DataError naming the hierarchy's field when it cannot be. */
export function readLevelPrompt(h: Hierarchy, name: string): string | undefined {
  const d = [...h.states, h.response].find((x) => x.name === name);
  if (!d?.systemPrompt) return undefined;
  try {
    return readTextInput(d.systemPrompt);
  } catch (err) {
    const reason = err instanceof DataError ? err.reason : (err as Error).message;
    throw new DataError(h.source, { field: `${name}.system_prompt` }, `${d.systemPrompt}: ${reason}`);
  }
}
