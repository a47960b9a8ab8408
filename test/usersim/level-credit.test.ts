/**
 * Per-level credit (`credit: level`): under per-level generation each level of a usersim reply
 * (each state, then the response) is one sequence of the loss; HumanLM rewards each tag by its own
 * score, so a level's tokens get the advantage of that level's reward among the group's rewards
 * of the same level, where `reply` credit gives them all the reply's. Checked on a group computed
 * by hand, token by token through the loss's weights, and from the judge's verdict to the
 * trainer's level rewards.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { creditedAdvantages, levelAdvantagesOf } from "../../trainers/grpo/advantages.js";
import { GrpoConfigSchema } from "../../trainers/grpo/config.js";
import type { DecisionPoint, Judged } from "../../trainers/grpo/decision-point.js";
import { keepInformativeGroups } from "../../trainers/grpo/dynamic-sampling.js";
import { policyLoss, type LossSequence } from "../../trainers/grpo/loss.js";
import { scoreReply } from "../../trainers/grpo/reward.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { simulationAnswer, UsersimBenchmark } from "../../worlds/usersim/benchmark.js";
import { judgeText } from "../../worlds/usersim/judge.js";
import { referenceOf } from "../../worlds/usersim/scenario.js";

const R3 = Math.sqrt(3);
// Three replies of two levels (a stance, then the response): level rewards by reply.
const LEVELS = [
  [1, 0.25],
  [0, 0.25],
  [0.5, 1],
];
// The reply's reward is its levels' mean (the judge's alignment with weight 1 each).
const group = { point: { id: "p" }, rewards: LEVELS.map((l) => (l[0]! + l[1]!) / 2), levelRewards: LEVELS };
// Each level one sequence of the loss, reply by reply; their lengths in tokens.
const sequences = LEVELS.flatMap((l, index) => l.map((_, level) => ({ group: 0, index, level })));
const LENGTHS = [2, 3, 1, 4, 3, 2];

describe("level credit", () => {
  const c = (credit: "reply" | "level") => GrpoConfigSchema.parse({ generation: "per-level", credit, advantageEps: 0 });

  it("gives each level the advantage of its own reward among the group's same level (by hand)", () => {
    // Stance: 1, 0, 0.5: mean 0.5, unbiased std 0.5. Response: 0.25, 0.25, 1: mean 0.5, std sqrt(0.1875) = sqrt(3)/4.
    const level = creditedAdvantages([group], sequences, c("level"));
    const expected = [1, -1 / R3, -1, -1 / R3, 0, 2 / R3];
    level.forEach((a, i) => expect(a).toBeCloseTo(expected[i]!, 12));
    // Reply credit: rewards 0.625, 0.125, 0.75 (mean 0.5, std sqrt(0.109375)), the same for both levels of a reply.
    const s = Math.sqrt(0.109375);
    const reply = creditedAdvantages([group], sequences, c("reply"));
    [0.125 / s, 0.125 / s, -0.375 / s, -0.375 / s, 0.25 / s, 0.25 / s].forEach((a, i) => expect(reply[i]).toBeCloseTo(a, 12));
    // The first reply's response scored lowest of its level: level credit pushes it down, reply credit up.
    expect(level[1]).toBeLessThan(0);
    expect(reply[1]).toBeGreaterThan(0);
  });

  it("reaches every token of a level through the loss's weights", () => {
    const A = creditedAdvantages([group], sequences, c("level"));
    // Ratio 1 (the update right after sampling), no KL, token-mean: a token's weight is its advantage over the batch's tokens.
    const seqs: LossSequence[] = LENGTHS.map((n, i) => ({ logp: new Array<number>(n).fill(-0.7), oldLogp: new Array<number>(n).fill(-0.7), advantage: A[i]! }));
    const total = LENGTHS.reduce((a, b) => a + b, 0);
    const res = policyLoss(seqs, { ...c("level"), klCoef: 0 }, 64);
    const perToken = res.weights.map((w) => Array.from(w, (x) => x * total));
    const expected = [1, -1 / R3, -1, -1 / R3, 0, 2 / R3];
    perToken.forEach((w, i) => {
      expect(w).toHaveLength(LENGTHS[i]!);
      for (const x of w) expect(x).toBeCloseTo(expected[i]!, 12);
    });
  });

  it("takes each level as a group of the estimator: rft's best per level, a flat level none", () => {
    const rft = levelAdvantagesOf([LEVELS], { advantage: "rft", advantageStd: "group", advantageEps: 0 });
    expect(rft).toEqual([
      [
        [3, 0],
        [0, 0],
        [0, 3],
      ],
    ]);
    expect(levelAdvantagesOf([[[0.5], [0.5]]], { advantage: "grpo", advantageStd: "group", advantageEps: 1e-6 })).toEqual([[[0], [0]]]);
    expect(() => levelAdvantagesOf([[[1, 2], [1]]], c("level"))).toThrow("different numbers of levels");
  });

  it("keeps a group whose reply rewards are flat when one of its levels is not (dynamic sampling)", () => {
    const flat = { rewards: [0.5, 0.5], levelRewards: [[1, 0], [0, 1]] };
    expect(keepInformativeGroups([flat], "grpo", "reply").kept).toHaveLength(0);
    expect(keepInformativeGroups([flat], "grpo", "level").kept).toHaveLength(1);
  });

  it("refuses what it cannot credit: joint generation, a judge without levels", () => {
    expect(() => GrpoConfigSchema.parse({ credit: "level" })).toThrow("level credit needs per-level generation");
    expect(() => creditedAdvantages([{ point: { id: "q" }, rewards: [1, 0] }], [{ group: 0, index: 0, level: 0 }], c("level"))).toThrow("decision point q: level credit needs a judge that scores each level");
  });

  it("the usersim judge's levels are each state's score, then the response's, and become the reply's level rewards", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "sw-usersim-credit-")), "g.jsonl");
    writeFileSync(file, generateUsersim(8, 3).jsonl);
    const b = new UsersimBenchmark();
    const item = (await b.load(file))[0]!;
    const truth = simulationAnswer(b.task(item, "vanilla"))!;
    // The stance made wrong: its level drops, the others keep their scores.
    const wrong = truth.replace(/<stance>\n[^\n]*\n<\/stance>/, "<stance>\nis neutral on the weather\n</stance>");
    const v = b.judge(item, wrong);
    const j = judgeText(wrong, referenceOf(item.record), b.hierarchy);
    expect(v.levels).toEqual([...b.hierarchy.states.map((d) => j.states[d.name]!.score), j.response]);
    expect(v.levels![0]).toBeLessThan(1);
    expect(b.judge(item, truth).levels!.every((x) => x === 1)).toBe(true);

    const point = { id: "p" } as DecisionPoint;
    const settings = { ...GrpoConfigSchema.parse({}), maxNewTokens: 64 };
    const reply = { text: wrong, tokens: 10, finish: "stop", logprob: 0 };
    const judged: Judged = { format: true, reward: 0.5, score: 0.5, levels: [0.25, null, 1] };
    // A level without a ground truth is credited with the reply's reward.
    expect(scoreReply(point, reply, settings, judged).levelRewards).toEqual([0.25, 0.5, 1]);
    // A malformed reply's levels all get the format failure.
    expect(scoreReply(point, reply, settings, { ...judged, format: false }).levelRewards).toEqual([-1, -1, -1]);
  });
});
