import { describe, expect, it } from "vitest";
import { Rng } from "../../worlds/core/rng.js";
import { heuristicReply, randomReply, simulationReply, targetsIn } from "../../worlds/usersim/baselines.js";
import { generateUsersim } from "../../worlds/usersim/generator.js";
import { DEFAULT_HIERARCHY, parseHierarchy } from "../../worlds/usersim/hierarchy.js";
import { judgeReply } from "../../worlds/usersim/judge.js";
import { latentTexts, normalizeTarget } from "../../worlds/usersim/latent.js";
import { summarizeJudgements } from "../../worlds/usersim/metrics.js";
import { realizeReply } from "../../worlds/usersim/realize.js";
import { parseConversationsJsonl } from "../../worlds/usersim/records.js";
import { referenceOf, referenceText, stateOfRecord } from "../../worlds/usersim/scenario.js";
import { EMOTIONS } from "../../worlds/usersim/vocabulary.js";

const gen = generateUsersim(300, 11);
const records = parseConversationsJsonl(gen.jsonl, "gen.jsonl");

describe("the user generator", () => {
  it("writes the same file for the same seed, another for another seed", () => {
    expect(generateUsersim(300, 11).jsonl).toBe(gen.jsonl);
    expect(generateUsersim(300, 12).jsonl).not.toBe(gen.jsonl);
    const progress: number[] = [];
    generateUsersim(600, 1, (d) => progress.push(d));
    expect(progress).toEqual([256, 512, 600]);
  });

  it("writes each reply from its latent states, and the states as the latent's texts", () => {
    for (const r of gen.records) {
      expect(r.states).toEqual(latentTexts(r.latent));
      expect(r.completion).toBe(realizeReply(r.latent));
    }
    // Distinct replies: the wording varies with the seed, the states with the user and the thread.
    expect(new Set(gen.records.map((r) => r.completion)).size).toBeGreaterThan(280);
  });

  it("keeps a user's traits across its records, and makes states follow from them as documented", () => {
    const byUser = new Map<string, typeof gen.records>();
    for (const r of gen.records) byUser.set(r.user_id, [...(byUser.get(r.user_id) ?? []), r]);
    expect([...byUser.values()].some((rs) => rs.length >= 3)).toBe(true);
    for (const rs of byUser.values()) {
      expect(new Set(rs.map((r) => JSON.stringify({ ...r.persona, statistics: null, platform: r.platform }))).size).toBe(1);
    }
    for (const r of gen.records) {
      const [first] = r.latent.stances;
      const feeling = EMOTIONS[r.latent.emotions[0]!.emotion]!.family;
      expect(feeling).toBe(first!.position === 0 ? "uncertain" : first!.position > 0 ? "positive" : "negative");
      expect(r.latent.goal.kind === "ask").toBe(first!.position === 0);
      expect(r.persona.values).toContain(`believes that ${r.latent.belief}`);
      expect(r.persona.values).toContain(r.latent.value);
      // The post names the target the first stance is about, so a model can name it too.
      expect(r.prompt.some((m) => m.content.toLowerCase().includes(normalizeTarget(first!.target)))).toBe(true);
      expect(r.prompt.filter((m) => m.role !== r.user_id).length).toBeGreaterThan(0);
      if (r.platform === "chat") expect(r.prompt[0]!.role).toBe(r.user_id);
    }
    const splits = gen.records.map((r) => r.split);
    for (const s of ["train", "val", "test"]) expect(splits.filter((x) => x === s).length).toBeGreaterThan(15);
  });

  it("ranks the baselines: random < heuristic < simulation = 1", () => {
    const rng = Rng.seeded("baselines");
    const score = (reply: (r: (typeof records)[number]) => ReturnType<typeof simulationReply>) =>
      summarizeJudgements(
        records.map((r) => judgeReply(reply(r), referenceOf(r), DEFAULT_HIERARCHY)),
        DEFAULT_HIERARCHY,
      );
    const view = (r: (typeof records)[number]) => {
      const s = stateOfRecord(r);
      return { user: s.user, profile: s.profile, thread: s.thread };
    };
    const sim = score((r) => simulationReply(r.latent!, DEFAULT_HIERARCHY));
    const heuristic = score((r) => heuristicReply(view(r), DEFAULT_HIERARCHY));
    const random = score((r) => randomReply(view(r), DEFAULT_HIERARCHY, rng));
    expect(sim.accuracy).toBe(1);
    expect(Object.values(sim.states).every((d) => d.mean === 1 && d.structured === 300)).toBe(true);
    expect(heuristic.accuracy).toBeGreaterThan(random.accuracy + 0.2);
    expect(heuristic.accuracy).toBeLessThan(0.85);
    // The profile lists tone and structure: the heuristic gets communication mostly right.
    expect(heuristic.states.communication!.mean!).toBeGreaterThan(0.8);
    expect(targetsIn(view(records[0]!))[0]).toBe(records[0]!.latent!.stances[0]!.target);
  });

  it("gives SFT its target text when the hierarchy's states all have a ground truth", () => {
    const r = records[0]!;
    expect(referenceText(r, DEFAULT_HIERARCHY)).toBe(
      [...DEFAULT_HIERARCHY.states.map((d) => `<${d.name}>\n${r.states[d.name]}\n</${d.name}>`), `<response>\n${r.reply}\n</response>`].join("\n"),
    );
    expect(referenceText(r, parseHierarchy({ sentiment: { desc: "s", max_tokens: 8 } }, "s.json"))).toBeUndefined();
  });
});
