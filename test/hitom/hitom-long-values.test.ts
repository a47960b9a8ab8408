/**
 * A bad-input message is one readable line: a Hi-ToM value quoted in it (a 1 MB answer, a
 * question whose order is wrong) is clipped, as the story and question messages already are.
 */
import { describe, expect, it } from "vitest";
import { parseHitom } from "../../worlds/hitom/dataset.js";
import { generateHitom } from "../../worlds/hitom/generator.js";
import { errorOf } from "../data-error.js";

describe("Hi-ToM bad-input messages quote values clipped", () => {
  it("a long answer that is not a choice; a long question of the wrong order", async () => {
    const g = await generateHitom(5, 2);
    const edit = (f: (e: Record<string, unknown>) => void) => {
      const copy = JSON.parse(g.json) as { data: Record<string, unknown>[] };
      f(copy.data[0]!);
      return JSON.stringify(copy);
    };
    const answer = errorOf(() => parseHitom(edit((e) => (e.answer = `${String(e.answer)}${"y".repeat(1_000_000)}`)), "g.json"));
    expect(answer.field).toBe("data[0].answer");
    expect(answer.message.length).toBeLessThan(200);
    // Parses (a very long name) but is of order 1, not the entry's.
    const order = errorOf(() => parseHitom(edit((e) => ((e.question = `Where does Z${"z".repeat(1_000_000)} think the lettuce is?`), (e.question_order = 3))), "g.json"));
    expect(order.field).toBe("data[0].question_order");
    expect(order.message.length).toBeLessThan(300);
  });
});
