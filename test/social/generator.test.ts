import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MajorityPredictor, RandomPredictor, SimulationPredictor } from "../../worlds/social/baselines.js";
import { parseTrees, type SocialTree } from "../../worlds/social/format.js";
import { generateSocial } from "../../worlds/social/generator.js";
import { scoreSocial, scoreTask } from "../../worlds/social/scoring.js";
import { compactPrompt, factsLine, taskPrompt } from "../../worlds/social/prompts.js";
import { SocialBenchmark } from "../../worlds/social/benchmark.js";
import { tasksOf } from "../../worlds/social/tasks.js";
import { SIDE_THRESHOLD, visibleSide } from "../../worlds/social/text.js";
import { TOPICS } from "../../worlds/social/vocabulary.js";
import { stanceWords } from "../../worlds/social/population.js";
import { loadBenchmark } from "../../worlds/registry.js";

const g = generateSocial(40, 11);
const trees = parseTrees(g.jsonl, "gen.jsonl");
const tasks = tasksOf(trees);

function score(p: { predict(t: (typeof tasks)[number]): string }) {
  return scoreSocial(tasks.map((t) => scoreTask(t, p.predict(t))));
}

describe("the social generator", () => {
  it("writes the same trees for the same seed, others for another seed", () => {
    expect(generateSocial(3, 11).jsonl).toBe(generateSocial(3, 11).jsonl);
    expect(g.jsonl.startsWith(generateSocial(3, 11).jsonl)).toBe(true);
    expect(generateSocial(3, 12).jsonl).not.toBe(generateSocial(3, 11).jsonl);
  });

  it("writes cascades at depths 0 and 1, with every reaction type, and candidates who ignored", () => {
    const count = (depth: number, type: string) => tasks.filter((t) => t.depth === depth && t.label.type === type).length;
    for (const depth of [0, 1]) for (const type of ["comment", "repost", "like", "ignore"]) expect(count(depth, type), `${type} at depth ${depth}`).toBeGreaterThan(5);
    for (const s of trees) {
      for (const x of s.tree.interactions) expect(x.depth).toBeLessThanOrEqual(1);
      // Every candidate of the latent block is a task, and nothing else is.
      expect(s.tree.latent!.decisions.length).toBe(tasks.filter((t) => t.tree === s.tree).length);
    }
  });

  it("the simulation agent, knowing the latent model, reproduces every label and every text", () => {
    const s = score(new SimulationPredictor());
    for (const d of [s.all, s.byDepth["0"]!, s.byDepth["1"]!]) {
      expect(d.accuracy).toBe(1);
      expect(d.macroF1).toBe(1);
      expect(d.format).toBe(1);
      expect(d.content.rougeL).toBe(1);
      expect(d.content.count).toBeGreaterThan(0);
    }
  });

  it("orders the baselines: random < majority (accuracy) and < profile-only < simulation", () => {
    const random = score(new RandomPredictor());
    const fitted = new MajorityPredictor(tasks);
    const majority = score(fitted);
    const profile = score(new SimulationPredictor({ draws: false }));
    expect(random.all.accuracy).toBeGreaterThan(0.15);
    expect(random.all.accuracy).toBeLessThan(0.35);
    expect(majority.all.accuracy).toBeGreaterThan(random.all.accuracy);
    expect(majority.all.macroF1).toBeLessThan(random.all.macroF1);
    expect(profile.all.accuracy).toBeGreaterThan(majority.all.accuracy);
    expect(profile.all.macroF1).toBeGreaterThan(random.all.macroF1);
    expect(profile.all.accuracy).toBeLessThan(1);
    // The majority agent says the same at a depth whatever the task.
    expect(new Set(tasks.filter((t) => t.depth === 0).map((t) => JSON.parse(fitted.predict(t)).action)).size).toBe(1);
    // The random agent is seeded by the task.
    expect(tasks.map((t) => new RandomPredictor().predict(t))).toEqual(tasks.map((t) => new RandomPredictor().predict(t)));
  });

  it("writes texts that show the writer's stance on the topic and style", () => {
    let checked = 0;
    for (const s of trees) {
      const t = s.tree as SocialTree;
      const topic = TOPICS.find((x) => x.key === t.post.topic)!;
      const latent = t.latent!;
      for (const d of latent.decisions) {
        const x = t.interactions.find((i) => i.user === d.user && i.parent === d.parent && i.type === "comment");
        if (!x) continue;
        const pool = d.stance >= SIDE_THRESHOLD ? topic.pro : d.stance <= -SIDE_THRESHOLD ? topic.con : topic.neutral;
        const other = d.stance >= SIDE_THRESHOLD ? topic.con : d.stance <= -SIDE_THRESHOLD ? topic.pro : [];
        const text = x.text.toLowerCase();
        const has = (claims: readonly string[]) => claims.some((c) => text.includes(c.toLowerCase().slice(1)));
        const style = latent.users.find((u) => u.id === d.user)!.style;
        // Terse writers may answer with a bare word ("agreed"); everyone else states a claim of their side.
        if (style !== "terse") expect(has(pool), `${x.text} (stance ${d.stance})`).toBe(true);
        expect(has(other)).toBe(false);
        if (style === "terse") expect(x.text.slice(x.text.indexOf(" ") + 1)).toBe(x.text.slice(x.text.indexOf(" ") + 1).toLowerCase());
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it("prompts with what the user could see and nothing of the latent block", () => {
    const t = tasks.find((x) => x.depth === 1 && x.label.type === "comment")!;
    const prompt = taskPrompt(t);
    const user = t.tree.users.find((u) => u.id === t.user)!;
    expect(prompt).toContain(`You are ${user.name} on a microblog.`);
    expect(prompt).toContain(JSON.stringify(t.tree.post.text));
    expect(prompt).toContain(`What do you do with [${t.parent}]?`);
    for (const h of user.history ?? []) expect(prompt).toContain(JSON.stringify(h.text));
    for (const secret of ["stance", "latent", "draws", String(t.tree.latent!.seed), t.label.content]) expect(prompt).not.toContain(secret);
  });

  it("the short prompt states what decides most reactions, as the screen shows it, and nothing of the latent block", () => {
    const seen = { own: 0, other: 0, first: 0, second: 0, none: 0, earlier: 0 };
    for (const t of tasks) {
      const facts = factsLine(t)!;
      const prompt = compactPrompt(t);
      expect(prompt.split("\n").slice(-2)).toEqual([facts, `What do you do with [${t.parent}]?`]);
      expect(prompt).toContain(JSON.stringify(t.tree.post.text));
      expect(prompt.length).toBeLessThan(taskPrompt(t).length);
      // Whose post the item answers: the generator's own `direct` input, read off the feed.
      const decision = t.tree.latent!.decisions.find((d) => d.user === t.user && d.parent === t.parent)!;
      if (t.depth === 1) expect(facts.includes("It answers your own post.")).toBe(decision.direct);
      else expect(facts).not.toMatch(/answers/);
      seen.own += Number(facts.includes("your own post"));
      seen.other += Number(facts.includes("someone else's post"));
      // The topic's place among the interests the description names, in its order.
      const topic = TOPICS.find((x) => x.key === t.tree.post.topic)!.name;
      const description = t.tree.users.find((u) => u.id === t.user)!.description!;
      const place = /^Into (.+) and (.+)\.$/.exec(description)!;
      const where = place[1] === topic ? "the first of your interests" : place[2] === topic ? "the second of your interests" : "not one of your interests";
      expect(facts).toContain(`Its topic, ${topic}, is ${where}.`);
      seen[where === "the first of your interests" ? "first" : where === "the second of your interests" ? "second" : "none"]++;
      // The user's own reactions before the item appeared, never the one asked about.
      const appeared = t.parent === t.tree.post.id ? t.tree.post.time : t.tree.interactions.find((i) => i.id === t.parent)!.time;
      const earlier = t.tree.interactions.filter((i) => i.user === t.user && i.time < appeared);
      expect(facts.match(/earlier\./g)?.length ?? 0).toBe(earlier.length);
      seen.earlier += earlier.length;
      expect(facts).not.toContain(`[${t.parent}] earlier`);
      for (const secret of ["stance", "latent", "draws", "Answer with"]) expect(prompt).not.toContain(secret);
    }
    for (const n of Object.values(seen)) expect(n).toBeGreaterThan(0);
    // The benchmark asks it with --context short; the full prompt stays the default.
    const file = join(mkdtempSync(join(tmpdir(), "sw-social-")), "gen.jsonl");
    writeFileSync(file, g.jsonl);
    const short = new SocialBenchmark({ context: "short" });
    const item = short.load(file).find((x) => x.task.depth === 1)!;
    expect(short.task(item, "vanilla").prompt).toBe(compactPrompt(item.task));
    expect(new SocialBenchmark().task(item, "vanilla").prompt).toBe(taskPrompt(item.task));
  });

  it("with stance, the short prompt's facts line also states the user's stance on the topic when they decided, from the latent block", async () => {
    const words = new Set<string>();
    for (const t of tasks) {
      const plain = factsLine(t)!;
      const withStance = factsLine(t, { stance: true })!;
      const d = t.tree.latent!.decisions.find((x) => x.user === t.user && x.parent === t.parent)!;
      const topic = TOPICS.find((x) => x.key === t.tree.post.topic)!.name;
      // Right after the topic's place, before the earlier reactions; the rest unchanged.
      const said = `Your stance on ${topic}: ${stanceWords(d.stance)}.`;
      const at = plain.indexOf(" is ", plain.indexOf(`Its topic, ${topic},`));
      const topicEnd = plain.indexOf(".", at) + 1;
      expect(withStance).toBe(`${plain.slice(0, topicEnd)} ${said}${plain.slice(topicEnd)}`);
      expect(compactPrompt(t, { stance: true })).toBe(compactPrompt(t).replace(plain, withStance));
      words.add(stanceWords(d.stance));
    }
    // The stance at the decision (it moves as the user acts), in every one of the five words.
    expect(words.size).toBe(5);
    // A tree without a latent block (a real dump's) has no stance to state.
    const { latent: _, ...bare } = tasks[0]!.tree;
    expect(factsLine({ ...tasks[0]!, tree: bare as SocialTree }, { stance: true })).toBe(factsLine(tasks[0]!));
    // The benchmark asks it with context short and stance; stance alone is refused.
    const file = join(mkdtempSync(join(tmpdir(), "sw-social-")), "gen.jsonl");
    writeFileSync(file, g.jsonl);
    const bench = await loadBenchmark("social", { context: "short", flags: { stance: true } });
    const item = (await bench.load(file))[5] as unknown as { task: (typeof tasks)[number] };
    expect(bench.task(item as never, "vanilla").prompt).toBe(compactPrompt(item.task, { stance: true }));
    expect(bench.title).toContain("with the user's stance");
    await expect(loadBenchmark("social", { flags: { stance: true } })).rejects.toThrow("--stance goes with --context short");
    await expect(loadBenchmark("tomi", { flags: { stance: true } })).rejects.toThrow("--stance does not apply to tomi");
  });

  it("reads an item's side off its text alone: the side of its latent stance whenever the text states a claim", () => {
    const sides = { for: 0, against: 0, none: 0 };
    for (const { tree } of trees) {
      const topic = TOPICS.findIndex((x) => x.key === tree.post.topic);
      const stances = new Map(tree.latent!.items.map((x) => [x.id, x.stance]));
      for (const it of [tree.post, ...tree.interactions.filter((x) => x.type !== "like")]) {
        const side = visibleSide(it.text, topic);
        const stance = stances.get(it.id)!;
        if (side) expect(stance * (side === "for" ? 1 : -1), `${it.text} (stance ${stance})`).toBeGreaterThanOrEqual(SIDE_THRESHOLD);
        // A writer without a side states no claim; one with a side may not either ("agreed", "Worth reading.").
        if (Math.abs(stance) < SIDE_THRESHOLD) expect(side, it.text).toBeUndefined();
        sides[side ?? "none"]++;
      }
    }
    for (const n of Object.values(sides)) expect(n).toBeGreaterThan(20);
    // In any case (terse writers lower-case everything); a text stating both sides shows neither.
    const bike = TOPICS.findIndex((x) => x.key === "bike-lanes");
    expect(visibleSide("@Lin Chen wrong. more bike lanes make cities safer", bike)).toBe("for");
    expect(visibleSide("BIKE LANES WASTE ROAD SPACE", bike)).toBe("against");
    expect(visibleSide("More bike lanes make cities safer, but bike lanes waste road space", bike)).toBeUndefined();
    expect(visibleSide("Do bike lanes work in hilly cities?", bike)).toBeUndefined();
    expect(visibleSide("More bike lanes make cities safer", TOPICS.findIndex((x) => x.key === "nuclear-power"))).toBeUndefined();
    // No claim of a side contains one of the other's: a text shows one side or none.
    for (const t of TOPICS) for (const a of t.pro) for (const b of t.con) expect(a.toLowerCase().includes(b.toLowerCase()) || b.toLowerCase().includes(a.toLowerCase())).toBe(false);
  });

  it("with agreement, the facts line also states whether the item takes the user's side: its text's side against the user's stance when they decided", async () => {
    const said = new Map<string, number>();
    for (const t of tasks) {
      const plain = factsLine(t)!;
      const d = t.tree.latent!.decisions.find((x) => x.user === t.user && x.parent === t.parent)!;
      const item = t.parent === t.tree.post.id ? t.tree.post : t.tree.interactions.find((x) => x.id === t.parent)!;
      const side = visibleSide(item.text, TOPICS.findIndex((x) => x.key === t.tree.post.topic));
      const want =
        side === undefined ? "It takes no side." : Math.abs(d.stance) < SIDE_THRESHOLD ? "You take no side." : (d.stance > 0) === (side === "for") ? "It agrees with you." : "It disagrees with you.";
      // After the topic's place (and the stance, when stated), before the earlier reactions.
      const topicEnd = plain.indexOf(".", plain.indexOf("Its topic, ")) + 1;
      const withAgreement = factsLine(t, { agreement: true })!;
      expect(withAgreement).toBe(`${plain.slice(0, topicEnd)} ${want}${plain.slice(topicEnd)}`);
      const withStance = factsLine(t, { stance: true })!;
      const stanceEnd = withStance.indexOf(".", withStance.indexOf("Your stance on ")) + 1;
      expect(factsLine(t, { stance: true, agreement: true })).toBe(`${withStance.slice(0, stanceEnd)} ${want}${withStance.slice(stanceEnd)}`);
      expect(compactPrompt(t, { agreement: true })).toBe(compactPrompt(t).replace(plain, withAgreement));
      // What the user perceives: no number, no latent word.
      for (const secret of ["stance", "latent", d.stance.toFixed(2)]) expect(withAgreement).not.toContain(secret);
      said.set(want, (said.get(want) ?? 0) + 1);
    }
    expect([...said.keys()].sort()).toEqual(["It agrees with you.", "It disagrees with you.", "It takes no side.", "You take no side."]);
    // A tree without a latent block (a real dump's) has no stance of the user's to compare with.
    const { latent: _, ...bare } = tasks[0]!.tree;
    expect(factsLine({ ...tasks[0]!, tree: bare as SocialTree }, { agreement: true })).toBe(factsLine(tasks[0]!));
    // The benchmark asks it with context short; agreement alone is refused, and by other worlds.
    const file = join(mkdtempSync(join(tmpdir(), "sw-social-")), "gen.jsonl");
    writeFileSync(file, g.jsonl);
    for (const facts of [{ agreement: true }, { stance: true, agreement: true }]) {
      const bench = await loadBenchmark("social", { context: "short", flags: facts });
      const item = (await bench.load(file))[7] as unknown as { task: (typeof tasks)[number] };
      expect(bench.task(item as never, "vanilla").prompt).toBe(compactPrompt(item.task, facts));
    }
    expect((await loadBenchmark("social", { context: "short", flags: { agreement: true } })).title).toContain("with whether the item agrees");
    expect((await loadBenchmark("social", { context: "short", flags: { stance: true, agreement: true } })).title).toContain("with the user's stance and whether the item agrees");
    await expect(loadBenchmark("social", { flags: { agreement: true } })).rejects.toThrow("--agreement goes with --context short");
    await expect(loadBenchmark("tomi", { flags: { agreement: true } })).rejects.toThrow("--agreement does not apply to tomi");
    expect(() => new SocialBenchmark({ flags: { agreement: true } })).toThrow("--agreement goes with --context short");
  });
});
