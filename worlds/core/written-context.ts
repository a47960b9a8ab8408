/**
 * A written socialized context: what a policy writes itself in simulation mode with
 * `context=self` (agents/policy/options.ts), before it answers, instead of reading the world
 * model's (compact-context.ts). The social-world-model's simulation mode proper: the policy reads
 * the story, writes who saw what, then answers from what it wrote.
 *
 * The reply is a trace of the asked object, one line per sentence that says where it is, each line
 * derivable from the story and the lines before it (a small causal LM writes it step by step),
 * then the line the question is answered from, as a compact context cites it (title, then value):
 *
 *   green_crate Ella Avery
 *   green_treasure_chest Avery
 *   - Ella spinach now:
 *   green_crate
 *
 * The answer is the reply's last line (citedAnswer). The world model writes the same trace from
 * the story text (never a file's label): it is what SFT teaches, and what a reply's trace is scored
 * against (traceFidelity). It writes it in either order (TraceOrder): the story's, or latest first.
 */
import { citation, type CompactLine } from "./compact-context.js";
import { escapeRegExp } from "./escape-reg-exp.js";

/**
 * The order of a trace's lines: the story's (`story`, the object's first place first), or the same
 * lines reversed (`latest`, its latest place first). Latest first, every rule that reads the last
 * line naming an agent reads the first instead (issue 27: a small causal LM's answer leans to the
 * first line naming the agent, which in the story's order is the wrong one for true belief).
 */
export const TRACE_ORDERS = ["story", "latest"] as const;
export type TraceOrder = (typeof TRACE_ORDERS)[number];

export interface WrittenContext {
  /** What to write, the prompt's last line before the reply. */
  readonly heading: string;
  /** The world model's trace of the question, line by line: what a faithful policy writes. */
  readonly trace: readonly string[];
  /** The line the question is answered from (undefined: none, or a question the world cannot read). */
  readonly answer: CompactLine | undefined;
  /**
   * The grammar of a reply, an anchored regular expression: trace lines over the story's places
   * and agents, then an answer line whose value is one of the story's containers. Built from what
   * the story names, not from the trace (it would give the answer away).
   */
  readonly pattern: string;
}

/** The reply that writes the world model's trace and answers from it (undefined: no answer line). */
export function writtenReply(w: WrittenContext): string | undefined {
  return w.answer && [...w.trace, citation(w.answer)].join("\n");
}

/** A reply's trace: its lines before the answer line (the last line opening with "- ", and its value). */
export function writtenTrace(reply: string): string[] {
  const lines = reply.trimEnd().split("\n").map((l) => l.trim());
  let k = lines.length - 1;
  while (k >= 0 && !lines[k]!.startsWith("- ")) k--;
  // No answer line: every line but the last (the answer) is the trace.
  return lines.slice(0, k >= 0 ? k : Math.max(0, lines.length - 1)).filter((l) => l !== "");
}

/** How a written trace compares with the world model's: the same lines in the same order, and how many lines are right. */
export interface TraceFidelity {
  readonly exact: boolean;
  /** The longer trace's length: a line written beyond the world model's counts against the reply. */
  readonly lines: number;
  /** Lines equal to the world model's line at the same position. */
  readonly right: number;
}

export function traceFidelity(written: readonly string[], gold: readonly string[]): TraceFidelity {
  let right = 0;
  const n = Math.min(written.length, gold.length);
  for (let i = 0; i < n; i++) if (written[i] === gold[i]) right++;
  return { exact: written.length === gold.length && right === gold.length, lines: Math.max(written.length, gold.length), right };
}

/** A regular expression's alternation of literal words, as a non-capturing group. */
export function wordChoice(words: readonly string[]): string {
  return `(?:${[...new Set(words)].map(escapeRegExp).join("|")})`;
}
