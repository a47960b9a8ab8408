/**
 * Whether a policy's belief answers depend on what the agent saw: for one order of belief, its
 * accuracy on the false-belief questions plus its accuracy on the true-belief ones, minus 1
 * (Youden's J). The bench names a belief question `_tom` when its label differs from reality
 * (worlds/tomi/questions.ts): the label of a true-belief question is the object's last place, and
 * a false-belief question's is another place, so a policy whose answer does not depend on what the
 * agent saw (always the last place, always the first, a guess) scores about 1 in sum, and this is
 * about 0; a policy that tells them apart scores up to 1. Accuracy alone can rise without it: a
 * majority rule (the last place) gains on the true-belief questions what it loses on the
 * false-belief ones, and question types in equal shares can teach memory and reality while both
 * belief types stand still.
 */
import type { BenchReport } from "../benchmarks/report.js";
import type { TomiQuestionType } from "../worlds/tomi/index.js";

export const BELIEF_ORDERS = [
  { order: "first order", falseBelief: "first_order_tom", trueBelief: "first_order_no_tom" },
  { order: "second order", falseBelief: "second_order_tom", trueBelief: "second_order_no_tom" },
] as const satisfies readonly { order: string; falseBelief: TomiQuestionType; trueBelief: TomiQuestionType }[];

/** Youden's J of one order (undefined: the report has no question of one of the two types). */
export function beliefDiscrimination(byType: BenchReport["byType"], o: (typeof BELIEF_ORDERS)[number]): number | undefined {
  const f = byType[o.falseBelief];
  const t = byType[o.trueBelief];
  if (!f?.total || !t?.total) return undefined;
  return f.correct / f.total + t.correct / t.total - 1;
}
