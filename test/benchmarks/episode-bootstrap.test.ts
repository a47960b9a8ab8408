/** The bootstrap over stories: as wide as the stories' spread says, not as the questions' count. */
import { describe, expect, it } from "vitest";
import { bootstrapInterval } from "../../benchmarks/episode-bootstrap.js";
import { wilsonInterval } from "../../benchmarks/wilson-interval.js";

describe("the bootstrap interval over stories", () => {
  it("is a point when every story scores the same", () => {
    expect(bootstrapInterval(Array.from({ length: 40 }, () => ({ correct: 5, total: 10 })))).toEqual({ low: 0.5, high: 0.5 });
  });

  it("is as wide as 50 independent answers when each of 50 stories of 10 questions is all right or all wrong", () => {
    const stories = Array.from({ length: 50 }, (_, i) => ({ correct: i % 2 ? 10 : 0, total: 10 }));
    const b = bootstrapInterval(stories, { seed: 3 });
    const perStory = wilsonInterval(25, 50);
    const perQuestion = wilsonInterval(250, 500);
    expect(b.high - b.low).toBeGreaterThan(2 * (perQuestion.high - perQuestion.low));
    expect(b.low).toBeCloseTo(perStory.low, 1);
    expect(b.high).toBeCloseTo(perStory.high, 1);
    expect(bootstrapInterval(stories, { seed: 3 })).toEqual(b);
    expect(bootstrapInterval([])).toEqual({ low: 0, high: 1 });
  });
});
