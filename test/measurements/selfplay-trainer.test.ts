/**
 * The self-play script's room schedule (measurements/selfplay-trainer.ts): what the room is asked
 * for is what the room accepts, and a learning-rate decay spans the rounds it is meant to span.
 */
import { describe, expect, it } from "vitest";
import { scheduleProblem, selfPlaySchedule, type SelfPlayScriptSettings } from "../../measurements/selfplay-trainer.js";
import { roundConfig, SelfPlayOptionsSchema } from "../../server/self-play/options.js";
import { updatesPerBatch } from "../../trainers/grpo/config.js";
import { learningRate } from "../../trainers/sft/schedule.js";

const settings: SelfPlayScriptSettings = {
  rounds: 5, episodes: 40, recentEpisodes: 40, heldOutEpisodes: 20, continue: false,
  steps: 12, prompts: 32, temperature: 2, advantage: "grpo", balance: "type", lr: 3e-4, warmup: 0, kl: 0.05, seed: 1,
};
const accepted = (s: SelfPlayScriptSettings) => SelfPlayOptionsSchema.parse(selfPlaySchedule("p", s));

describe("the self-play script's schedule", () => {
  it("without a schedule, each round trains at one learning rate on the episodes since the last round", () => {
    const o = accepted(settings);
    expect(o).toMatchObject({ everyEpisodes: 40, recentEpisodes: 40, heldOutEpisodes: 20, turns: false, continueTraining: false });
    const c = roundConfig(o);
    expect([c.lr, c.minLr, c.warmupSteps, c.scheduleSteps]).toEqual([3e-4, undefined, 0, undefined]);
    expect(accepted({ ...settings, heldOutEpisodes: 0 }).heldOutEpisodes).toBeUndefined();
  });

  it("rounds that continue each other decay the learning rate over all the rounds' updates, warming up once", () => {
    const o = accepted({ ...settings, continue: true, minLr: 3e-5, warmup: 6, recentEpisodes: 120 });
    expect(o.continueTraining).toBe(true);
    expect(o.recentEpisodes).toBe(120);
    const c = roundConfig(o);
    expect(updatesPerBatch(c)).toBe(1);
    expect([c.lr, c.minLr, c.warmupSteps, c.scheduleSteps]).toEqual([3e-4, 3e-5, 6, 5 * 12]);
  });

  it("fresh rounds decay within each round (the trainer's own schedule length)", () => {
    const c = roundConfig(accepted({ ...settings, minLr: 3e-5, warmup: 2 }));
    expect([c.minLr, c.warmupSteps, c.scheduleSteps]).toEqual([3e-5, 2, undefined]);
  });

  it("the room refuses a decay over one round when rounds continue, so the script must give its length", () => {
    const o = selfPlaySchedule("p", { ...settings, continue: true, minLr: 3e-5 });
    const { scheduleSteps: _, ...trainer } = o.trainer as Record<string, unknown>;
    expect(SelfPlayOptionsSchema.safeParse({ ...o, trainer }).success).toBe(false);
  });

  it("continuing rounds warm up in round 1 only, and reach minLr at the last round's end", () => {
    const c = roundConfig(accepted({ ...settings, continue: true, minLr: 3e-5, warmup: 6 }));
    // The trainer's schedule (trainers/grpo/trainer.ts) at the update count the room carries on.
    const schedule = { lr: c.lr, minLr: c.minLr!, warmupSteps: c.warmupSteps, totalSteps: c.scheduleSteps! };
    const rate = (update: number) => learningRate(schedule, update);
    expect(rate(0)).toBeCloseTo(3e-4 / 6, 12);
    expect(rate(5)).toBeCloseTo(3e-4, 12);
    // Round 2's first update (update 12) goes on decaying from round 1's last, with no new warmup.
    expect(rate(12)).toBeLessThan(rate(11));
    expect(rate(12)).toBeGreaterThan(2.8e-4);
    expect(rate(5 * 12 - 1)).toBeLessThan(3.1e-5);
    expect(rate(5 * 12)).toBeCloseTo(3e-5, 12);
  });
});

describe("the schedule options the script refuses", () => {
  const ok = { rounds: 5, steps: 12, continue: false, lr: 3e-4, minLr: 3e-5, warmup: 6 };

  it("accepts a decay to a lower rate and a warmup within the updates it spans", () => {
    expect(scheduleProblem(ok)).toBeUndefined();
    expect(scheduleProblem({ ...ok, minLr: undefined, warmup: 12 })).toBeUndefined();
    expect(scheduleProblem({ ...ok, continue: true, warmup: 60 })).toBeUndefined();
  });

  it("refuses a minimum above the rate", () => {
    expect(scheduleProblem({ ...ok, minLr: 1e-3 })?.option).toBe("round-min-lr");
  });

  it("refuses a warmup longer than one round, or than all of them when they continue", () => {
    expect(scheduleProblem({ ...ok, warmup: 13 })?.option).toBe("round-warmup");
    expect(scheduleProblem({ ...ok, continue: true, warmup: 61 })?.message).toContain("more than the 60");
  });
});
