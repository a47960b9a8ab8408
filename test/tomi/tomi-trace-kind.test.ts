/**
 * A ToMi trace line gives its question's type; the type must be of the question's kind (a
 * memory type for "Where was the X at the beginning?", first order for "Where will A look for
 * the X?", ...). A trace whose lines were reordered, repeated or edited is bad input naming the
 * trace line; report rows never count questions under another kind's type.
 */
import { describe, expect, it } from "vitest";
import { parseTomi } from "../../worlds/tomi/babi.js";
import { errorOf } from "../data-error.js";

const STORY = ["1 Ella entered the garage.", "2 Avery entered the garage.", "3 The spinach is in the green_crate.", "4 Ella exited the garage."];
const QUESTIONS = [
  "Where was the spinach at the beginning?\tgreen_crate\t1",
  "Where is the spinach really?\tgreen_crate\t1",
  "Where will Ella look for the spinach?\tgreen_crate\t1",
  "Where does Ella think that Avery searches for the spinach?\tgreen_crate\t1",
];
const TYPES = ["memory", "reality", "first_order_0_no_tom", "second_order_0_no_tom"];
const text = QUESTIONS.map((q) => [...STORY, `5 ${q}`].join("\n")).join("\n") + "\n";
const trace = (types: readonly string[]) => types.map((t) => `enter_agent_0,enter_agent_1,${t},true_belief`).join("\n") + "\n";

describe("ToMi trace question types against the questions", () => {
  it("reads a trace whose types match the questions", () => {
    expect(parseTomi(text, "x.txt", trace(TYPES), "x.trace").items.map((i) => i.trace!.questionType)).toEqual([
      "memory",
      "reality",
      "first_order_no_tom",
      "second_order_no_tom",
    ]);
  });

  it("refuses swapped, repeated or edited trace lines, naming the trace line and the question", () => {
    const swapped = errorOf(() => parseTomi(text, "x.txt", trace([TYPES[1]!, TYPES[0]!, TYPES[2]!, TYPES[3]!]), "x.trace"));
    expect(swapped.message).toBe('x.trace:1: question type "reality", but x.txt:5 asks "Where was the spinach at the beginning?" (a memory question)');
    const repeated = errorOf(() => parseTomi(text, "x.txt", trace([TYPES[0]!, TYPES[1]!, TYPES[2]!, TYPES[2]!]), "x.trace"));
    expect(repeated.file).toBe("x.trace");
    expect(repeated.line).toBe(4);
    const edited = errorOf(() => parseTomi(text, "x.txt", trace([TYPES[0]!, TYPES[1]!, TYPES[2]!, "memory"]), "x.trace"));
    expect(edited.line).toBe(4);
  });

  it("leaves what only the story decides to the trace (tom or no_tom, the agent digit)", () => {
    expect(parseTomi(text, "x.txt", trace([TYPES[0]!, TYPES[1]!, "first_order_1_tom", TYPES[3]!]), "x.trace").items).toHaveLength(4);
  });
});
