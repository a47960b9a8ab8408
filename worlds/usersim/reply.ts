/**
 * The simulated user's hierarchical reply: one text per latent state, in the hierarchy's order,
 * then the response. Two forms of one thing:
 *
 *   JSON   {"states": {"stance": "...", "emotion": "...", ...}, "response": "..."}
 *          what the zod schema validates (and a JSON Schema derived from it constrains);
 *   text   <stance>\n...\n</stance>\n<emotion>\n...\n</emotion>\n...<response>\n...\n</response>
 *          what a model writes and is trained on, as HumanLM's recipe has it.
 *
 * The text is read strictly: exactly the hierarchy's tags, each once, in order, lowercase, with
 * only whitespace between them and nothing around them. A state is one line of text without angle
 * brackets (so no tag can hide in it); the response may hold anything but its own closing tag.
 * Anything else is malformed, which the judge gives the lowest reward.
 */
import { z } from "zod";
import type { FormatResult } from "../core/rewards/strict-format.js";
import { avoiding } from "./avoid-pattern.js";
import { maxChars, tags, type Dimension, type Hierarchy } from "./hierarchy.js";

export interface Reply {
  /** Tag -> text, for every state of the hierarchy. */
  readonly states: Readonly<Record<string, string>>;
  readonly response: string;
}

/** A state's text (trimmed): one line, no angle brackets, something other than spaces. */
export const STATE_PATTERN = "[^\\s<>](?:[^<>\\r\\n]*[^\\s<>])?";
const STATE_RE = new RegExp(`^${STATE_PATTERN}$`);
const RESPONSE_TEXT = avoiding("</response>").startsWithText;
const RESPONSE_RE = new RegExp(`^${RESPONSE_TEXT}$`);

function stateText(d: Dimension): z.ZodString {
  return z
    .string()
    .trim()
    .min(1, `${d.name} is empty`)
    .max(maxChars(d), `${d.name} is longer than ${maxChars(d)} characters`)
    .regex(STATE_RE, `${d.name} must be one line of text without < or >`)
    .describe(d.desc);
}

function responseText(d: Dimension): z.ZodString {
  return z
    .string()
    .trim()
    .min(1, "the response is empty")
    .max(maxChars(d), `the response is longer than ${maxChars(d)} characters`)
    .regex(RESPONSE_RE, "the response must not contain </response>")
    .describe(d.desc);
}

/** The reply's fields for a hierarchy: `states` (an object with one key per state, in order) and `response`. */
export function replyShape(h: Hierarchy) {
  return {
    states: z.strictObject(Object.fromEntries(h.states.map((d) => [d.name, stateText(d)]))).describe("The user's latent states, in this order."),
    response: responseText(h.response),
  };
}

const schemas = new WeakMap<Hierarchy, z.ZodType<Reply>>();

export function replySchema(h: Hierarchy): z.ZodType<Reply> {
  let s = schemas.get(h);
  if (!s) schemas.set(h, (s = z.strictObject(replyShape(h)) as unknown as z.ZodType<Reply>));
  return s;
}

/** The text form (HumanLM's layout: each tag on its own line around its text). */
export function renderReply(reply: Reply, h: Hierarchy): string {
  return replyLevels(reply, h).join("\n");
}

/**
 * The text form's blocks, one per tag in order (each state, then the response): what each level
 * of per-level generation writes (levelTextPattern), and renderReply joined by line breaks.
 */
export function replyLevels(reply: Reply, h: Hierarchy): string[] {
  const block = (tag: string, text: string) => `<${tag}>\n${text}\n</${tag}>`;
  return [...h.states.map((d) => block(d.name, reply.states[d.name] ?? "")), block(h.response.name, reply.response)];
}

/** Reads the text form strictly; the reason names the tag at fault. */
export function parseReply(text: string, h: Hierarchy): FormatResult<Reply> {
  const s = text.trim();
  if (s === "") return { ok: false, error: "empty reply" };
  const found: Record<string, string> = {};
  let pos = 0;
  let previous: string | undefined;
  for (const tag of tags(h)) {
    while (pos < s.length && /\s/.test(s[pos]!)) pos++;
    const open = `<${tag}>`;
    if (!s.startsWith(open, pos)) {
      const where = previous === undefined ? "first" : `after </${previous}>`;
      return { ok: false, error: `expected ${open} ${where}, found ${quote(s.slice(pos, pos + 24))}` };
    }
    const close = s.indexOf(`</${tag}>`, pos + open.length);
    if (close < 0) return { ok: false, error: `${open} is never closed` };
    found[tag] = s.slice(pos + open.length, close);
    pos = close + tag.length + 3;
    previous = tag;
  }
  if (pos < s.length) return { ok: false, error: `text after </${previous}>: ${quote(s.slice(pos, pos + 24))}` };
  const r = replySchema(h).safeParse({ states: Object.fromEntries(h.states.map((d) => [d.name, found[d.name]])), response: found[h.response.name] });
  return r.success ? { ok: true, action: r.data } : { ok: false, error: r.error.issues[0]?.message ?? "invalid" };
}

function quote(s: string): string {
  return s === "" ? "the end" : JSON.stringify(s);
}

/**
 * A state as the reply's pattern writes it: its text bounded by the schema's `maxChars`, as the
 * lookahead `(?=[^\n]{1,N}\n)` before it says (the run of characters up to the state's line
 * break, which is the state's text: it holds no line break). A regex engine reads it so, and the
 * grammar compiler reads it as a counted text closed by that line break (models/grammar/regex.ts),
 * a counter beside the state's small automaton rather than N copies of it.
 */
export function boundedStatePattern(d: Dimension): string {
  return `(?=[^\\n]{1,${maxChars(d)}}\\n)(?:${STATE_PATTERN})`;
}

/** The response's closing: a line break, then its tag. */
const RESPONSE_CLOSE = "\n</response>";

/**
 * The response and its closing tag as the reply's pattern writes them, the response bounded by
 * the schema's `maxChars` as the lookahead `(?=[\s\S]{m,n}$)` before it says: the rest of the
 * reply, which is the response and `\n</response>` (the response comes last), has 1..maxChars
 * characters more than that closing. The response may hold line breaks, so it cannot be closed by
 * one as a state is; the grammar compiler reads the bound as a counted text that ends the reply
 * (models/grammar/regex.ts), the response's small automaton and its closing tag beside a counter.
 * At its bound the response can only close.
 */
export function boundedResponsePattern(d: Dimension): string {
  return `(?=[\\s\\S]{${1 + RESPONSE_CLOSE.length},${maxChars(d) + RESPONSE_CLOSE.length}}$)(?:${RESPONSE_TEXT}\\n</${d.name}>)`;
}

/** One tag's block as the reply's pattern writes it: its state bounded (boundedStatePattern), or the response (boundedResponsePattern), which ends the reply. */
function blockPattern(h: Hierarchy, d: Dimension): string {
  return d === h.response ? `<${d.name}>\\n${boundedResponsePattern(d)}` : `<${d.name}>\\n${boundedStatePattern(d)}\\n</${d.name}>`;
}

/**
 * The text form as one anchored regular expression: what a constrained decoder compiles to make
 * every sample parse. It fixes the layout `renderReply` writes and bounds each text at the
 * schema's length: each state (`boundedStatePattern`) and the response (`boundedResponsePattern`),
 * one lookahead each.
 */
export function replyTextPattern(h: Hierarchy): string {
  return `^${[...h.states, h.response].map((d) => blockPattern(h, d)).join("\\n")}$`;
}

/**
 * One level of the text form alone (per-level generation: each tag written by a request of its
 * own), as an anchored pattern: the levels' texts joined by a line break match replyTextPattern.
 */
export function levelTextPattern(h: Hierarchy, tag: string): string {
  const d = [...h.states, h.response].find((x) => x.name === tag);
  if (!d) throw new Error(`"${tag}" is not a tag of the hierarchy`);
  return `^${blockPattern(h, d)}$`;
}
