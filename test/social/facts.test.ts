/**
 * The social prompt's facts registry (worlds/social/facts.ts): each fact declared once, and taken
 * from there by the benchmark, `bench` and `train grpo`'s flags, the help text and the measurement
 * scripts' options; the facts of whether to react at all (the topic's interest to the user, how
 * many other items of the cascade the user had weighed when they came to it), stated as the user perceives them and
 * consistent with what the screen shows.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { z } from "zod";
import { parseWithFlags, worldNamed } from "../../cli/benchmark-flags.js";
import { benchHelp } from "../../cli/commands/bench.js";
import { factsFields } from "../../measurements/social-facts-args.js";
import { RunStore } from "../../store/run-store.js";
import { BenchPoints } from "../../trainers/grpo/bench-points.js";
import { checkFlags, loadBenchmark, loadWorld } from "../../worlds/registry.js";
import { FACT_KEYS, interestWords, SOCIAL_FACTS } from "../../worlds/social/facts.js";
import { parseTrees } from "../../worlds/social/format.js";
import { generateSocial } from "../../worlds/social/generator.js";
import { LIKE } from "../../worlds/social/items.js";
import { followerCount } from "../../worlds/social/graph.js";
import { generateNetwork } from "../../worlds/social/network.js";
import { topInterest } from "../../worlds/social/population.js";
import { SocialSim, type DecisionRecord } from "../../worlds/social/sim.js";
import { Rng } from "../../worlds/core/rng.js";
import { compactPrompt, factsLine } from "../../worlds/social/prompts.js";
import { tasksOf } from "../../worlds/social/tasks.js";
import { TOPICS } from "../../worlds/social/vocabulary.js";
import { capture } from "../exports/helpers.js";
import { tempDir } from "../policy/fixtures.js";

const g = generateSocial(30, 13);
const tasks = tasksOf(parseTrees(g.jsonl, "gen.jsonl"));
const decisionOf = (t: (typeof tasks)[number]) => t.tree.latent!.decisions.find((d) => d.user === t.user && d.parent === t.parent)!;

describe("the social prompt's facts", () => {
  it("are stated in the registry's order, after the topic's place and before the earlier reactions, each only when asked", () => {
    const all = Object.fromEntries(FACT_KEYS.map((k) => [k, true]));
    for (const t of tasks.slice(0, 80)) {
      const plain = factsLine(t)!;
      const topicEnd = plain.indexOf(".", plain.indexOf("Its topic, ")) + 1;
      const each = FACT_KEYS.map((k) => factsLine(t, { [k]: true })!.slice(topicEnd, -(plain.length - topicEnd) || undefined));
      expect(factsLine(t, all)).toBe(`${plain.slice(0, topicEnd)}${each.join("")}${plain.slice(topicEnd)}`);
      for (const s of each) expect(s).toMatch(/^ [A-Z][^[\]]*\.$/);
    }
  });

  it("interest: how much the topic interests the user, in words, never against the profile's two interests", () => {
    const words = new Map<string, number>();
    for (const t of tasks) {
      const topic = TOPICS.find((x) => x.key === t.tree.post.topic)!;
      const interest = t.tree.latent!.users.find((u) => u.id === t.user)!.interests[topic.key]!;
      const line = factsLine(t, { interest: true })!;
      const said = `It interests you ${interestWords(interest)}.`;
      expect(line).toContain(` ${said}`);
      expect(compactPrompt(t, { interest: true })).toBe(compactPrompt(t).replace(factsLine(t)!, line));
      // The profile names the user's two focus topics (interests 0.45 and up); the words refine it.
      const named = / is the (first|second) of your interests\./.test(line);
      expect(["very much", "much", "somewhat"].includes(interestWords(interest)), line).toBe(named);
      // Words, not the latent number.
      expect(line).not.toContain(interest.toFixed(2).slice(1));
      words.set(interestWords(interest), (words.get(interestWords(interest)) ?? 0) + 1);
    }
    expect([...words.keys()].sort()).toEqual(["a little", "hardly", "much", "somewhat", "very much"]);
  });

  it("seen: how many other items of the cascade the user had weighed when they came to the asked one, at least the earlier reactions the line states", () => {
    const counts = new Set<number>();
    for (const t of tasks) {
      const earlier = decisionOf(t).earlier;
      const line = factsLine(t, { seen: true })!;
      expect(line).toContain(earlier === 0 ? " When you came to it, you had weighed no other item of this story." : ` When you came to it, you had weighed ${earlier} other item${earlier === 1 ? "" : "s"} of this story, counting any shown with it.`);
      // Each earlier reaction was to an item the user weighed.
      expect((line.match(/ earlier\./g) ?? []).length).toBeLessThanOrEqual(earlier);
      counts.add(earlier);
    }
    expect([...counts].filter((n) => n >= 2).length).toBeGreaterThan(0);
    expect(counts.has(0) && counts.has(1)).toBe(true);
    // A tree without a latent block (a real dump's) states none of the facts.
    const { latent: _, ...bare } = tasks[0]!.tree;
    expect(factsLine({ ...tasks[0]!, tree: bare }, Object.fromEntries(FACT_KEYS.map((k) => [k, true])))).toBe(factsLine(tasks[0]!));
  });

  it("seen: the count is the feed's history, the items seen earlier and those shown at the same moment and weighed first (so not \"before\")", () => {
    let together = 0;
    let total = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const { population, graph } = generateNetwork({ users: 60, seed: `seen:${seed}`, meanFollowing: 8, communitySize: 15 });
      const sim = new SocialSim(population, graph, { seed, engagement: 0, maxDepth: 1 });
      const decisions: DecisionRecord[] = [];
      sim.onDecision = (d) => decisions.push(d);
      const author = Array.from({ length: 60 }, (_, u) => u).reduce((a, u) => (followerCount(graph, u) > followerCount(graph, a) ? u : a), 0);
      sim.post(author, topInterest(population, author));
      const rng = Rng.seeded(`seen-steps:${seed}`);
      while (!sim.isQuiet()) sim.stepRuleAgents(rng);
      const items = sim.items;
      for (const [i, d] of decisions.entries()) {
        // Others' items the user had seen (a like is no feed item) strictly before the asked one came.
        let before = 0;
        for (let y = 0; y < items.length; y++) {
          const at = sim.seenAt(d.user, y);
          if (y !== d.item && items.author[y] !== d.user && items.kind[y] !== LIKE && at >= 0 && at < d.time) before++;
        }
        // Shown at the same moment (an item and its unseen thread), weighed first.
        const withIt = decisions.slice(0, i).filter((e) => e.user === d.user && e.time === d.time).length;
        expect(d.earlier).toBe(before + withIt);
        if (withIt > 0) together++;
        total++;
      }
    }
    expect(total).toBeGreaterThan(100);
    expect(together).toBeGreaterThan(0);
  });

  it("are declared once: the benchmark's flags, bench's options, run parameters, help text and the measurement scripts' options all come from the registry", async () => {
    const entry = (await loadWorld("social")).benchmark!;
    expect(entry.flags!.map((f) => f.key)).toEqual(SOCIAL_FACTS.map((f) => f.key));
    expect(Object.keys(factsFields)).toEqual([...FACT_KEYS]);
    const help = await benchHelp();
    for (const f of SOCIAL_FACTS) expect(help).toContain(`--${f.key}`);
    // One section for the social world's options, its flags included, at the end.
    expect(help.match(/^Social.* only/gm)).toEqual(["Social only"]);
    expect(help.slice(help.indexOf("\nSocial only:"))).toContain(`--${SOCIAL_FACTS.at(-1)!.key}`);
    const dir = tempDir("sw-social-facts-");
    const data = join(dir, "s.jsonl");
    writeFileSync(data, generateSocial(2, 5).jsonl);
    capture();
    try {
      for (const key of FACT_KEYS) {
        const store = join(dir, `store-${key}`);
        const json = join(dir, `${key}.json`);
        expect(await main(["bench", "social", "--data", data, "--context", "short", `--${key}`, "--store", store, "--json", json, "--quiet"])).toBe(0);
        const run = (await RunStore.open(store)).list()[0]!;
        expect(run.params.options).toEqual({ context: "short", [key]: true });
        const asked = await loadBenchmark("social", { context: "short", flags: { [key]: true } });
        expect(JSON.parse(readFileSync(json, "utf8")).benchmark).toBe("social");
        expect(asked.title).toContain(SOCIAL_FACTS.find((f) => f.key === key)!.title);
        // Without the short prompt, refused naming the flag; another world does not take it.
        await expect(main(["bench", "social", "--data", data, `--${key}`, "--store", store, "--quiet"])).resolves.toBe(2);
      }
      await expect(main(["bench", "tomi", "--data", data, "--stance", "--store", join(dir, "t"), "--quiet"])).resolves.toBe(2);
    } finally {
      vi.restoreAllMocks();
    }
    expect(await parseWithFlags(["tomi", "--stance"], z.object({ _: z.array(z.string()) })).catch((e: Error) => e.message)).toBe("--stance does not apply to tomi (it applies to social)");
    expect(await parseWithFlags(["--world", "social", "--seen"], z.object({ world: z.string() }), ["world"])).toEqual({ args: { world: "social", seen: true }, flags: { seen: true } });
    await expect(loadBenchmark("tomi", { flags: { interest: true } })).rejects.toThrow("--interest does not apply to tomi (it applies to social)");
  });

  it("are recorded where runs made before the registry recorded them (right after context), so such runs resume and continue", async () => {
    const dir = tempDir("sw-social-facts-order-");
    const data = join(dir, "s.jsonl");
    writeFileSync(data, generateSocial(2, 5).jsonl);
    const store = join(dir, "store");
    capture();
    try {
      // The exact text `bench` recorded before the registry; a resume compares it as text (toEqual would not see the order).
      expect(await main(["bench", "social", "--data", data, "--context", "short", "--stance", "--agreement", "--depth", "0", "--limit", "3", "--store", store, "--quiet"])).toBe(0);
      const run = (await RunStore.open(store)).list()[0]!;
      expect(JSON.stringify(run.params.options)).toBe('{"context":"short","stance":true,"agreement":true,"depth":0}');
      expect(await main(["bench", "social", "--data", data, "--context", "short", "--stance", "--agreement", "--depth", "0", "--limit", "3", "--store", store, "--quiet", "--resume", run.id])).toBe(0);
    } finally {
      vi.restoreAllMocks();
    }
    // GRPO on the benchmark (its `given` order: hierarchy, weights, split, context, then the facts).
    const points = await BenchPoints.open("social", data, "vanilla", { options: { context: "short", flags: { stance: true, agreement: true } } });
    expect(JSON.stringify(points.runParams.options)).toBe('{"context":"short","stance":true,"agreement":true}');
  });
});

describe("a command line with the social facts", () => {
  const Cmd = z.object({ _: z.array(z.string()), data: z.string().optional(), limit: z.string().optional(), context: z.string().optional(), world: z.string().optional() });

  it("names its world wherever the flags stand, as before the registry: a flag or an option before the world's name", async () => {
    for (const argv of [
      ["--stance", "social", "--context", "short"],
      ["--limit", "3", "social", "--context", "short", "--stance"],
      ["--data=F", "social", "--context", "short", "--stance"],
      ["--context", "short", "--stance", "--world", "social"],
    ]) {
      expect(worldNamed(argv, Cmd, ["world"]), argv.join(" ")).toBe("social");
      expect((await parseWithFlags(argv, Cmd, ["world"])).flags, argv.join(" ")).toEqual({ stance: true });
    }
    const dir = tempDir("sw-social-facts-argv-");
    const data = join(dir, "s.jsonl");
    writeFileSync(data, generateSocial(2, 5).jsonl);
    const c = capture();
    try {
      for (const [i, argv] of [
        ["--stance", "social", "--data", data, "--context", "short"],
        ["--limit", "3", "social", "--data", data, "--context", "short", "--stance"],
        [`--data=${data}`, "social", "--context", "short", "--stance"],
      ].entries()) {
        const store = join(dir, `store${i}`);
        expect(await main(["bench", ...argv, "--store", store, "--quiet"]), c.err).toBe(0);
        expect((await RunStore.open(store)).list()[0]!.params.options).toEqual({ context: "short", stance: true });
      }
      // No registry world named: the command's own error about the world, as before the registry.
      c.err = "";
      expect(await main(["bench", "nope", "--stance", "--data", data])).toBe(2);
      expect(c.err).toContain("argument: expected one of tomi, hitom");
      c.err = "";
      expect(await main(["train", "grpo", "--world", "soical", "--stance", "--model", dir, "--out", join(dir, "o")])).toBe(2);
      expect(c.err).toContain("--world: Invalid option");
      // A world named, the flag another world's: said so.
      c.err = "";
      expect(await main(["bench", "--stance", "tomi", "--data", data])).toBe(2);
      expect(c.err).toContain("--stance does not apply to tomi (it applies to social)");
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("refuses a flag named as an option, naming the world and the flag", async () => {
    const social = await loadWorld("social");
    const clash = (key: string) => ({ ...social, benchmark: { ...social.benchmark!, flags: [...social.benchmark!.flags!, { key, help: "" }] } });
    expect(() => checkFlags(clash("depth"), true)).toThrow("the social world's benchmark flag --depth has the name of a benchmark option");
    expect(() => checkFlags(clash("vp-labels"), true)).toThrow("flag --vp-labels has the name of a benchmark option");
    expect(() => checkFlags(clash("judge"), true)).toThrow("flag --judge has the name");
    expect(() => checkFlags(social, false)).toThrow("the social world's benchmark declares flags (--stance): add it to the registry's WITH_FLAGS");
    expect(checkFlags(social, true)).toBe(social);
    // An option of the command itself (train grpo's --seed, say) is refused the same way, when the command starts.
    await expect(parseWithFlags(["social", "--stance"], z.object({ _: z.array(z.string()), stance: z.string().optional() }))).rejects.toThrow("the social world's benchmark flag --stance is also an option of this command");
  });
});
