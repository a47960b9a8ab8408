/**
 * How faithful a policy's self-written context is (simulation mode with `context=self`,
 * worlds/core/written-context.ts): its reply's trace against the one the world model writes from
 * the same story, and, over a run, the share of questions whose trace is exactly the world
 * model's and the share of trace lines right. Bench's report carries it where such replies exist.
 */
import { askedQuestion } from "../agents/policy/question-prompt.js";
import type { ContextSource } from "../agents/policy/options.js";
import { traceFidelity, writtenTrace, type TraceFidelity } from "../worlds/core/written-context.js";
import type { QuestionTask } from "../worlds/question/world.js";

/**
 * A reply's trace against the world model's for the question it answers, written as `source` asks
 * (its order: `self-latest`'s reply is scored against the reversed trace); undefined: the world writes none.
 */
export async function writtenFidelity(task: QuestionTask, reply: string, source: ContextSource = "self"): Promise<TraceFidelity | undefined> {
  const { written } = await askedQuestion({ ...task, mode: "simulation" }, source);
  return written && traceFidelity(writtenTrace(reply), written.trace);
}

export interface WrittenContextStat {
  /** Questions whose reply wrote a context. */
  readonly questions: number;
  /** Of them, those whose trace is the world model's, line for line. */
  readonly exact: number;
  readonly exactShare: number;
  /** Trace lines (each question's longer trace, the reply's or the world model's) and those right. */
  readonly lines: number;
  readonly linesRight: number;
  readonly lineShare: number;
  /** The share of exact traces by question type (the report's type order). */
  readonly exactShareByType: Readonly<Record<string, number>>;
}

/** The fidelity of a run's written contexts (undefined: no reply wrote one). */
export function writtenContextStat(results: readonly { readonly type: string; readonly writtenContext?: TraceFidelity }[], types: readonly string[]): WrittenContextStat | undefined {
  let questions = 0;
  let exact = 0;
  let lines = 0;
  let linesRight = 0;
  const byType = new Map<string, { n: number; exact: number }>();
  for (const r of results) {
    const w = r.writtenContext;
    if (!w) continue;
    questions++;
    if (w.exact) exact++;
    lines += w.lines;
    linesRight += w.right;
    const t = byType.get(r.type) ?? { n: 0, exact: 0 };
    t.n++;
    if (w.exact) t.exact++;
    byType.set(r.type, t);
  }
  if (questions === 0) return undefined;
  const order = [...types.filter((t) => byType.has(t)), ...[...byType.keys()].filter((t) => !types.includes(t))];
  return {
    questions,
    exact,
    exactShare: exact / questions,
    lines,
    linesRight,
    lineShare: lines ? linesRight / lines : 0,
    exactShareByType: Object.fromEntries(order.map((t) => [t, byType.get(t)!.exact / byType.get(t)!.n])),
  };
}
