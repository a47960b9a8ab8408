import { describe, expect, it } from "vitest";
import { rougeL } from "../../worlds/core/rewards/rouge-l.js";
import { bertScore, bertScoreOfStates, OnnxTokenEncoder, type TokenStates } from "../../worlds/social/bertscore.js";
import { parseTrees } from "../../worlds/social/format.js";
import { socialReward } from "../../worlds/social/rewards.js";
import { contentRougeL, contentTokens, macroF1, perLabel, readReply, scoreSocial, scoreTask } from "../../worlds/social/scoring.js";
import { tasksOf, type SocialTask } from "../../worlds/social/tasks.js";
import { table, writeModelFolder } from "../onnx-model-folder.js";

const tree = {
  id: "t",
  post: { id: "p", user: "a", text: "Nuclear power is safe.", time: 0, topic: "nuclear-power" },
  users: [{ id: "a" }, { id: "b" }, { id: "c" }, { id: "d" }],
  candidates: [{ user: "d", parent: "p" }],
  interactions: [
    { id: "x", user: "b", parent: "p", depth: 0, type: "comment", text: "I agree, nuclear power is safe", time: 1 },
    { id: "y", user: "c", parent: "p", depth: 0, type: "repost", text: "", time: 1 },
    { id: "z", user: "a", parent: "x", depth: 1, type: "comment", text: "thanks", time: 2 },
  ],
};
const tasks = tasksOf(parseTrees(JSON.stringify(tree), "t.jsonl"));
const task = (id: string): SocialTask => tasks.find((t) => t.id === id)!;

describe("metrics", () => {
  it("macro-F1 as scikit-learn computes it: every label in either list, 0 where never right", () => {
    const truth = ["comment", "comment", "ignore", "ignore", "repost"];
    const pred = ["comment", "ignore", "ignore", "ignore", "like"];
    // comment: P 1/1, R 1/2, F1 2/3; ignore: P 2/3, R 2/2, F1 4/5; like and repost: 0.
    expect(macroF1(truth, pred)).toBeCloseTo((2 / 3 + 4 / 5) / 4, 12);
    const labels = perLabel(truth, pred);
    expect(Object.keys(labels)).toEqual(["comment", "ignore", "like", "repost"]);
    expect(labels.ignore).toEqual({ support: 2, predicted: 3, precision: 2 / 3, recall: 1, f1: 0.8 });
    expect(labels.like).toEqual({ support: 0, predicted: 1, precision: 0, recall: 0, f1: 0 });
    expect(macroF1(["ignore", "ignore"], ["ignore", "ignore"])).toBe(1);
  });

  it("ROUGE-L of content: rouge-score's tokens, CJK characters one token each", () => {
    // LCS 3 of 3 and 6 tokens: P 1, R 1/2, F 2/3.
    expect(contentRougeL("The cat sat", "the cat sat on the mat")).toBeCloseTo(2 / 3, 12);
    for (const [a, b] of [
      ["I disagree. Nuclear is too dangerous!", "i DISAGREE: nuclear power is too dangerous"],
      ["@Lin Chen agreed", "agreed"],
    ]) {
      expect(contentRougeL(a!, b!)).toBe(rougeL(a!, b!).fmeasure);
    }
    expect(contentTokens("我喜欢EV车!")).toEqual(["我", "喜", "欢", "ev", "车"]);
    // 我喜欢猫 / 我喜欢狗: LCS 3 of 4 each way.
    expect(contentRougeL("我喜欢猫", "我喜欢狗")).toBeCloseTo(0.75, 12);
    expect(rougeL("我喜欢猫", "我喜欢狗").fmeasure).toBe(0);
    expect(contentRougeL("", "anything")).toBe(0);
  });

  it("reads replies strictly, then the first JSON object in them; anything else is invalid", () => {
    const t = task("t/d@p");
    expect(readReply('{"action": "like", "target": "p"}', t)).toEqual({ type: "like", content: "", strict: true, action: { action: "like", target: "p" } });
    const fenced = readReply('Sure!\n```json\n{"action": "comment", "target": "p", "content": "No {way}"}\n```', t);
    expect([fenced.type, fenced.content, fenced.strict]).toEqual(["comment", "No {way}", false]);
    expect(readReply('{"action": "like", "target": "x"}', t).type).toBe("invalid");
    expect(readReply('{"action": "like", "target": "p", "content": "hi"}', t).type).toBe("invalid");
    expect(readReply('{"action": "comment", "target": "p"}', t).type).toBe("invalid");
    expect(readReply("I would like it", t).type).toBe("invalid");
  });

  it("scores a run per depth: type accuracy, macro-F1, ROUGE-L over labels with content", () => {
    // By item, then in the order of `users`.
    expect(tasks.map((t) => [t.id, t.label.type])).toEqual([
      ["t/b@p", "comment"],
      ["t/c@p", "repost"],
      ["t/d@p", "ignore"],
      ["t/a@x", "comment"],
    ]);
    const replies: Record<string, string> = {
      "t/d@p": '{"action": "ignore", "target": "p"}',
      "t/b@p": '{"action": "comment", "target": "p", "content": "I agree nuclear is safe"}',
      "t/c@p": '{"action": "like", "target": "p"}',
      "t/a@x": "thanks!",
    };
    const s = scoreSocial(tasks.map((t) => scoreTask(t, replies[t.id]!)));
    const d0 = s.byDepth["0"]!;
    expect([d0.total, d0.correct, d0.accuracy]).toEqual([3, 2, 2 / 3]);
    // comment 1/1, ignore 1/1, like 0, repost 0.
    expect(d0.macroF1).toBeCloseTo(0.5, 12);
    // Only b's comment has content at depth 0: LCS("i agree nuclear is safe", "i agree nuclear power is safe") = 5; P 1, R 5/6.
    expect(d0.content.count).toBe(1);
    expect(d0.content.rougeL).toBeCloseTo((2 * 1 * (5 / 6)) / (1 + 5 / 6), 12);
    expect(d0.format).toBe(1);
    const d1 = s.byDepth["1"]!;
    expect([d1.total, d1.correct, d1.format, d1.content.rougeL, d1.macroF1]).toEqual([1, 0, 0, 0, 0]);
    expect(s.all.total).toBe(4);
    expect(s.all.accuracy).toBe(0.5);
  });
});

describe("BERTScore", () => {
  const states = (rows: number[][], weights: number[]): TokenStates => ({ count: rows.length, dim: rows[0]!.length, states: Float32Array.from(rows.flat()), weights: Float32Array.from(weights) });

  it("matches bert_score's greedy matching, boundary tokens in the maxima and out of the means (hand-computed)", () => {
    const cand = states([[1, 0], [0, 1], [1, 0]], [0, 1, 0]);
    const ref = states([[1, 0], [1, 1], [0, -1], [1, 0]], [0, 1, 1, 0]);
    const s = bertScoreOfStates(cand, ref);
    // P: the candidate's token (0, 1) is closest to (1, 1)/sqrt 2: cos 0.7071.
    expect(s.precision).toBeCloseTo(Math.SQRT1_2, 6);
    // R: (1, 1) matches at 0.7071; (0, -1) best matches a boundary token (cos 0), not (0, 1) (cos -1).
    expect(s.recall).toBeCloseTo(Math.SQRT1_2 / 2, 6);
    expect(s.f1).toBeCloseTo((2 * Math.SQRT1_2 * (Math.SQRT1_2 / 2)) / (Math.SQRT1_2 * 1.5), 6);
    // Only boundary tokens: an empty text scores 0.
    expect(bertScoreOfStates(states([[1, 0], [1, 0]], [0, 0]), ref)).toEqual({ precision: 0, recall: 0, f1: 0 });
  });

  it("embeds tokens with an ONNX model through the real tokenizer, boundary tokens weighted 0", () => {
    const vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "i", "agree", "disagree", "nuclear", "power", "is", "safe", "."];
    const rows = table("social-bertscore", vocab);
    const encoder = OnnxTokenEncoder.open(writeModelFolder(rows, vocab));
    const t = encoder.encode("I agree.");
    const ids = ["[CLS]", "i", "agree", ".", "[SEP]"].map((w) => vocab.indexOf(w));
    expect(t.count).toBe(5);
    expect(Array.from(t.weights)).toEqual([0, 1, 1, 1, 0]);
    expect(Array.from(t.states).map((x) => Math.round(x * 1e4))).toEqual(ids.flatMap((i) => rows[i]!).map((x) => Math.round(x * 1e4)));
    const byHand = (text: string[]) => states(["[CLS]", ...text, "[SEP]"].map((w) => rows[vocab.indexOf(w)]!), [0, ...text.map(() => 1), 0]);
    const s = bertScore("I agree, nuclear power is safe.", "I disagree.", encoder);
    const h = bertScoreOfStates(byHand(["i", "agree", "[UNK]", "nuclear", "power", "is", "safe", "."]), byHand(["i", "disagree", "."]));
    expect(s.f1).toBeCloseTo(h.f1, 5);
    expect(s.precision).toBeCloseTo(h.precision, 5);
    expect(bertScore("I agree.", "I agree.", encoder).f1).toBeCloseTo(1, 5);
    // Scored runs name the encoder.
    const scored = scoreSocial([scoreTask(task("t/b@p"), '{"action": "comment", "target": "p", "content": "I agree"}', encoder)], encoder.id);
    expect(scored.all.content.bertScore?.encoder).toBe(encoder.id);
    expect(scored.all.content.bertScore!.f1).toBeGreaterThan(0);
  });

  it("says what is missing in an encoder folder", () => {
    expect(() => OnnxTokenEncoder.open("/nonexistent/encoder")).toThrow("BERTScore encoder folder not found: /nonexistent/encoder");
  });
});

describe("the GRPO reward", () => {
  it("gives -1 to anything that is not exactly the schema, else type match plus ROUGE-L", () => {
    const t = task("t/b@p");
    for (const bad of ["", "comment", '{"action": "comment", "target": "p"}', '```json\n{"action": "like", "target": "p"}\n```', '{"action": "like", "target": "q"}', '{"action": "like", "target": "p", "extra": 1}']) {
      expect(socialReward(bad, t)).toMatchObject({ reward: -1, format: false });
    }
    expect(socialReward('{"action": "like", "target": "p"}', t)).toMatchObject({ reward: 0, format: true, type: 0, rougeL: 0 });
    const r = socialReward('{"action": "comment", "target": "p", "content": "I agree, nuclear power is safe"}', t);
    expect(r).toMatchObject({ reward: 2, type: 1, rougeL: 1 });
    // A label without content: the type alone.
    expect(socialReward('{"action": "repost", "target": "p"}', task("t/c@p")).reward).toBe(1);
    expect(socialReward('{"action": "comment", "target": "p", "content": "I agree"}', t, { type: 1, rougeL: 0.5, formatFailure: -2 }).reward).toBeCloseTo(1 + 0.5 * ((2 * 1 * (2 / 6)) / (1 + 2 / 6)), 12);
  });
});

describe("label replies", () => {
  it("write each label as the answer a model should give, which the strict reward takes as right", async () => {
    const { labelReply } = await import("../../worlds/social/tasks.js");
    expect(tasks.map(labelReply)).toEqual([
      '{"action":"comment","target":"p","content":"I agree, nuclear power is safe"}',
      '{"action":"repost","target":"p"}',
      '{"action":"ignore","target":"p"}',
      '{"action":"comment","target":"x","content":"thanks"}',
    ]);
    for (const t of tasks) expect(socialReward(labelReply(t), t)).toMatchObject({ format: true, type: 1 });
  });
});
