/**
 * A reader of ToMi's written traces (worlds/tomi/written-context.ts) by the documented rules, apart
 * from the world model: the tests check that its reading of the world model's trace is the label.
 */
import type { TraceOrder } from "../../worlds/core/written-context.js";

export const story = (...lines: string[]) => lines.map((l, i) => `${i + 1} ${l}`).join("\n");

/** Ella leaves before Avery moves the spinach: her belief is false, Avery's true. */
export const FALSE_BELIEF = story(
  "Ella entered the garage.",
  "Avery entered the garage.",
  "The spinach is in the green_crate.",
  "Ella exited the garage.",
  "Avery moved the spinach to the blue_box.",
);

/**
 * The answer as a reader of a trace finds it. In the story's order: reality the last line's place,
 * memory the first's, a view the last line naming its agents. Latest first: reality the first
 * line's, memory the last's, a view the first line naming its agents. A question of another form
 * is an error, not reality.
 */
export function readTrace(trace: readonly string[], question: string, order: TraceOrder = "story"): string | undefined {
  const first = /^Where will (\S+) look for the \S+\?$/.exec(question);
  const second = /^Where does (\S+) think that (\S+) searches for the \S+\?$/.exec(question);
  const rows = trace.map((l) => l.split(" "));
  const latest = rows[order === "latest" ? 0 : rows.length - 1];
  const earliest = rows[order === "latest" ? rows.length - 1 : 0];
  if (/^Where is the \S+ really\?$/.test(question)) return latest?.[0];
  if (/^Where was the \S+ at the beginning\?$/.test(question)) return earliest?.[0];
  if (!first && !second) throw new Error(`readTrace: no rule reads "${question}"`);
  const names = first ? [first[1]!] : [second![1]!, second![2]!];
  const seenBy = (r: string[]) => names.every((n) => r.slice(1).includes(n));
  return (order === "latest" ? rows.find(seenBy) : rows.findLast(seenBy))?.[0];
}
