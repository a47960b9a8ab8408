/** Youden's J of the belief questions (measurements/belief-discrimination.ts). */
import { describe, expect, it } from "vitest";
import { BELIEF_ORDERS, beliefDiscrimination } from "../../measurements/belief-discrimination.js";
import { questionType } from "../../worlds/tomi/questions.js";

const stat = (correct: number, total: number) => ({ correct, total, accuracy: correct / total });
const [first, second] = BELIEF_ORDERS;

describe("beliefDiscrimination", () => {
  it("is 0 for a rule that ignores what the agent saw, whatever its total", () => {
    // The last place, always: every true-belief question right, every false-belief one wrong.
    expect(beliefDiscrimination({ first_order_no_tom: stat(90, 90), first_order_tom: stat(0, 10) }, first)).toBe(0);
    // A coin between two places.
    expect(beliefDiscrimination({ first_order_no_tom: stat(45, 90), first_order_tom: stat(5, 10) }, first)).toBe(0);
  });

  it("is 1 for a policy that answers every belief right, and reads its own order only", () => {
    const byType = { second_order_no_tom: stat(30, 30), second_order_tom: stat(12, 12), first_order_tom: stat(0, 5), first_order_no_tom: stat(0, 5) };
    expect(beliefDiscrimination(byType, second)).toBe(1);
    expect(beliefDiscrimination(byType, first)).toBe(-1);
  });

  it("is undefined without questions of both types", () => {
    expect(beliefDiscrimination({ first_order_no_tom: stat(3, 4) }, first)).toBeUndefined();
    expect(beliefDiscrimination({ first_order_no_tom: stat(3, 4), first_order_tom: stat(0, 0) }, first)).toBeUndefined();
  });

  it("reads the types the bench gives a belief question whose label differs from reality, and one whose label is reality", () => {
    const first_order = { kind: "first_order", agent: "Ann", object: "apple" } as const;
    const second_order = { kind: "second_order", agent: "Ann", other: "Bob", object: "apple" } as const;
    expect(questionType(first_order, "box", "basket")).toBe(first.falseBelief);
    expect(questionType(first_order, "basket", "basket")).toBe(first.trueBelief);
    expect(questionType(second_order, "box", "basket")).toBe(second.falseBelief);
    expect(questionType(second_order, "basket", "basket")).toBe(second.trueBelief);
  });
});
