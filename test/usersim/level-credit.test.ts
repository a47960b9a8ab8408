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
import { levelAdvantagesOf, sequenceCredits } from "../../trainers/grpo/advantages.js";
import { levelBlocks, tokenLevels } from "../../trainers/grpo/level-tokens.js";
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
    const level = sequenceCredits([group], sequences, c("level")).map((x) => x.advantage);
    const expected = [1, -1 / R3, -1, -1 / R3, 0, 2 / R3];
    level.forEach((a, i) => expect(a).toBeCloseTo(expected[i]!, 12));
    // Reply credit: rewards 0.625, 0.125, 0.75 (mean 0.5, std sqrt(0.109375)), the same for both levels of a reply.
    const s = Math.sqrt(0.109375);
    const reply = sequenceCredits([group], sequences, c("reply")).map((x) => x.advantage);
    [0.125 / s, 0.125 / s, -0.375 / s, -0.375 / s, 0.25 / s, 0.25 / s].forEach((a, i) => expect(reply[i]).toBeCloseTo(a, 12));
    // The first reply's response scored lowest of its level: level credit pushes it down, reply credit up.
    expect(level[1]).toBeLessThan(0);
    expect(reply[1]).toBeGreaterThan(0);
  });

  it("reaches every token of a level through the loss's weights", () => {
    const A = sequenceCredits([group], sequences, c("level")).map((x) => x.advantage);
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

  it("refuses what it cannot credit: soft thinking's tokens, a judge without levels", () => {
    expect(GrpoConfigSchema.parse({ credit: "level" }).generation).toBe("joint");
    expect(() => GrpoConfigSchema.parse({ credit: "level", soft: true })).toThrow("level credit goes without soft thinking");
    expect(() => sequenceCredits([{ point: { id: "q" }, rewards: [1, 0] }], [{ group: 0, index: 0, level: 0 }], c("level"))).toThrow("decision point q: level credit needs a judge that scores each level");
    expect(() => sequenceCredits([{ point: { id: "q" }, rewards: [1, 0] }], [{ group: 0, index: 0, tokenLevels: [0] }], c("level"))).toThrow("decision point q: level credit needs a judge that scores each level");
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

/**
 * Level credit under joint generation: the reply is one sequence, split by its levels' tags into
 * token spans; a token of level k's block gets level k's advantage, a token outside every block
 * (the separator, the end of turn) and every token of a malformed reply the reply's.
 */
describe("level credit under joint generation", () => {
  // A hand-made tokenizer: token i decodes to PIECES[i]; the end of turn (9) past the text.
  const PIECES = ["<stance>", "\nagrees with", " bike lanes", "\n</stance>", "\n<response>", "\nYes", ".\n</response>", "\n", "<response>", "<|im_end|>", "\n</stance>\n"];
  const decode = (ids: readonly number[]) => ids.map((i) => PIECES[i]!).join("");
  const NAMES = ["stance", "response"];

  it("splits a reply's tokens by its levels' blocks: each token to the block it overlaps most, none outside them", () => {
    // <stance> | \nagrees with | bike lanes | \n</stance> | \n<response> | \nYes | .\n</response> | end of turn
    const ids = [0, 1, 2, 3, 4, 5, 6, 9];
    const text = decode(ids.slice(0, -1));
    expect(levelBlocks(text, NAMES)).toEqual([
      { start: 0, end: text.indexOf("</stance>") + 9 },
      { start: text.indexOf("<response>"), end: text.length },
    ]);
    // "\n<response>" holds the separator (1 character) and the tag (10): the response's.
    expect(Array.from(tokenLevels(text, ids, decode, NAMES)!)).toEqual([0, 0, 0, 0, 1, 1, 1, -1]);
    // The separator a token of its own: outside both blocks.
    const apart = [0, 1, 2, 3, 7, 8, 5, 6, 9];
    expect(decode(apart.slice(0, -1))).toBe(text);
    expect(Array.from(tokenLevels(text, apart, decode, NAMES)!)).toEqual([0, 0, 0, 0, -1, 1, 1, 1, -1]);
    // A token that closes a block and holds the separator ("\n</stance>\n": 10 characters in, 1 out): the block's.
    const merged = [0, 1, 2, 10, 8, 5, 6];
    expect(decode(merged)).toBe(text);
    expect(Array.from(tokenLevels(text, merged, decode, NAMES)!)).toEqual([0, 0, 0, 0, 1, 1, 1]);
    // Byte-level tokens: "é" (C3 A9) split in two. The prefix ending at its first byte decodes it as U+FFFD, read without it:
    // the first byte covers nothing new and goes with the character it begins, the second covers it.
    const BYTES = [Buffer.from("<stance>\n"), Buffer.of(0xc3), Buffer.of(0xa9), Buffer.from("\n</stance>"), Buffer.from("\n<response>\nX\n</response>"), Buffer.from("<|im_end|>")];
    const bytesDecode = (xs: readonly number[]) => new TextDecoder().decode(Buffer.concat(xs.map((i) => BYTES[i]!)));
    const accented = [0, 1, 2, 3, 4, 5];
    expect(bytesDecode([0, 1])).toBe("<stance>\n\uFFFD");
    expect(Array.from(tokenLevels(bytesDecode(accented.slice(0, -1)), accented, bytesDecode, NAMES)!)).toEqual([0, 0, 0, 0, 1, -1]);
    // A level missing: not split.
    expect(tokenLevels(decode([4, 5, 6]), [4, 5, 6], decode, NAMES)).toBeUndefined();
    expect(levelBlocks("<stance>\nx\n</stance>\n<response>\ny", NAMES)).toBeUndefined();
  });

  // Three joint replies of two levels (a stance, then the response), the third malformed (its
  // levels and its reply the format failure, -1, as reward.ts gives them); the first two split.
  const JOINT = [
    [1, 0.25],
    [0, 0.25],
    [-1, -1],
  ];
  const rewards = [0.625, 0.125, -1];
  const jointGroup = { point: { id: "j" }, rewards, levelRewards: JOINT };
  const split = [
    { group: 0, index: 0, tokenLevels: [0, 0, 0, -1, 1, 1, -1] },
    { group: 0, index: 1, tokenLevels: [0, 1, 1, 1, -1] },
    { group: 0, index: 2 },
  ];
  // By hand. Stance 1, 0, -1: mean 0, std 1. Response 0.25, 0.25, -1: mean -1/6, deviations 5/12,
  // 5/12, -5/6, std sqrt((2 * 25/144 + 100/144) / 2) = 5 sqrt(3) / 12. The reply 0.625, 0.125, -1:
  // mean -1/12, deviations 17/24, 5/24, -22/24, std sqrt((289 + 25 + 484) / 576 / 2).
  const sr = Math.sqrt(798 / 576 / 2);
  const reply = [17 / 24 / sr, 5 / 24 / sr, -22 / 24 / sr];
  const stance = [1, 0, -1];
  const response = [1 / R3, 1 / R3, -2 / R3];
  const expected = [
    [stance[0]!, stance[0]!, stance[0]!, reply[0]!, response[0]!, response[0]!, reply[0]!],
    [stance[1]!, response[1]!, response[1]!, response[1]!, reply[1]!],
    [reply[2]!, reply[2]!, reply[2]!],
  ];
  const cl = GrpoConfigSchema.parse({ credit: "level", advantageEps: 0 });

  it("gives each token its level's advantage among the group's same level, the reply's outside the levels and in a malformed reply (by hand)", () => {
    const credits = sequenceCredits([jointGroup], split, cl);
    credits.slice(0, 2).forEach((cr, i) => {
      expect(cr.perToken).toHaveLength(expected[i]!.length);
      Array.from(cr.perToken!).forEach((a, t) => expect(a, `reply ${i} token ${t}`).toBeCloseTo(expected[i]![t]!, 12));
      // Its one advantage is the reply's (what a token outside the levels gets).
      expect(cr.advantage).toBeCloseTo(reply[i]!, 12);
    });
    expect(credits[2]!.perToken).toBeUndefined();
    expect(credits[2]!.advantage).toBeCloseTo(reply[2]!, 12);
    // The second reply's stance (0) is its level's mean: its stance token learns nothing, where its reply's advantage is positive.
    expect(credits[1]!.perToken![0]).toBe(0);
    // Reply credit: every token the reply's, split or not.
    const cr = GrpoConfigSchema.parse({ advantageEps: 0 });
    sequenceCredits([jointGroup], split, cr).forEach((x, i) => {
      expect(x.perToken).toBeUndefined();
      expect(x.advantage).toBeCloseTo(reply[i]!, 12);
    });
  });

  it("reaches every token through the loss's weights", () => {
    const credits = sequenceCredits([jointGroup], split, cl);
    const lengths = expected.map((e) => e.length);
    const seqs: LossSequence[] = lengths.map((n, i) => ({
      logp: new Array<number>(n).fill(-0.7),
      oldLogp: new Array<number>(n).fill(-0.7),
      advantage: credits[i]!.advantage,
      ...(credits[i]!.perToken ? { advantages: credits[i]!.perToken } : {}),
    }));
    const total = lengths.reduce((a, b) => a + b, 0);
    // Ratio 1, no KL, token-mean: a token's weight is its advantage over the batch's tokens.
    const res = policyLoss(seqs, { ...cl, klCoef: 0 }, 64);
    res.weights.forEach((w, i) => {
      expect(w).toHaveLength(lengths[i]!);
      Array.from(w, (x) => x * total).forEach((x, t) => expect(x, `reply ${i} token ${t}`).toBeCloseTo(expected[i]![t]!, 12));
    });
  });
});
