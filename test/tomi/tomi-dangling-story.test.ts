/**
 * Every ToMi story ends with its question. A story whose question line is missing (a line lost
 * in the middle of the file) is bad input naming its last line, not silently dropped when the
 * next story begins; the end of the file already says so for the last story.
 */
import { describe, expect, it } from "vitest";
import { parseTomi } from "../../worlds/tomi/babi.js";
import { errorOf } from "../data-error.js";

const STORY = ["1 Ella entered the garage.", "2 Avery entered the garage.", "3 The spinach is in the green_crate.", "4 Ella exited the garage."];
const Q1 = "5 Where will Ella look for the spinach?\tgreen_crate\t1";
const Q2 = "5 Where is the spinach really?\tgreen_crate\t1";
const TRACE = "a,first_order_0_no_tom,true_belief\na,reality,true_belief\n";

describe("ToMi stories without a question", () => {
  it("reads whole blocks", () => {
    expect(parseTomi([...STORY, Q1, ...STORY, Q2].join("\n") + "\n", "x.txt", TRACE, "x.trace").items).toHaveLength(2);
  });

  it("refuses a story whose question line is missing in the middle of the file, with or without a trace", () => {
    const text = [...STORY, ...STORY, Q2].join("\n") + "\n";
    for (const [trace, traceFile] of [[undefined, undefined], ["a,reality,true_belief\n", "x.trace"]] as const) {
      const err = errorOf(() => parseTomi(text, "x.txt", trace, traceFile));
      expect(err.message).toBe("x.txt:4: the story ends without a question (line 5 starts a new story): a question line missing?");
    }
  });

  it("refuses a repeated first line (a story of one sentence and no question)", () => {
    const text = [STORY[0]!, ...STORY, Q1].join("\n") + "\n";
    expect(errorOf(() => parseTomi(text, "x.txt")).line).toBe(1);
  });
});
