/**
 * The economy as the rest of the program takes it through the registry: its room scenarios with
 * their options, its decision-point files (generate), its benchmark and solver (bench), the
 * trainer's scored decisions, the rule-based households by name, and the month events a room plots.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runEpisode } from "../../worlds/core/loop.js";
import { loadBenchmark, loadDecisions, loadGenerator, loadScenario, loadSolver } from "../../worlds/registry.js";
import {
  decisionJson,
  DEFAULT_HOUSEHOLD_RULE,
  economyParams,
  generateDecisionPoints,
  heuristicPolicy,
  householdRule,
  NEAR_BEST,
  responsivePolicy,
  ROOM_HOUSEHOLDS,
  scoreDecision,
  serializeDecisionPoints,
  simulateEconomy,
  type EconomyBenchItem,
  type EconomyState,
  type HouseholdObservation,
  type MonthEventData,
} from "../../worlds/economy/index.js";

const tmp = () => mkdtempSync(join(tmpdir(), "sw-economy-"));

describe("household rules by name", () => {
  it("reads every rule and its arguments", () => {
    expect(householdRule("heuristic", 1)?.id).toBe("heuristic");
    expect(householdRule("random", 1)?.id).toBe("random");
    expect(householdRule("fixed", 1)?.id).toBe("fixed:1,0.5");
    expect(householdRule("fixed:0.3,0.7", 1)?.id).toBe("fixed:0.3,0.7");
    expect(householdRule("responsive", 1)?.id).toBe("responsive:0.1");
    expect(householdRule("responsive:-0.2", 1)?.id).toBe("responsive:-0.2");
    expect(householdRule("policy:/tmp/x", 1)).toBeUndefined();
  });

  it("names what is wrong with a bad argument", () => {
    expect(() => householdRule("fixed:2,0.5", 1)).toThrow(/fixed policy: work must be in \[0, 1\], got 2/);
    expect(() => householdRule("fixed:0.5", 1)).toThrow(/expected fixed:W,C/);
    expect(() => householdRule("responsive:abc", 1)).toThrow(/the strength K must be a number, got "abc"/);
    expect(() => householdRule("responsive:3", 1)).toThrow(/strength must be in \[-1, 1\]/);
    expect(() => householdRule("heuristic:2", 1)).toThrow(/heuristic takes no argument/);
  });

  it("responsive households move work with the wage trend they read, and only work", () => {
    const run = simulateEconomy({ params: economyParams({ households: 8, months: 14, skillBatches: 5 }), seed: 3, policy: heuristicPolicy(3) });
    const heuristic = heuristicPolicy(3);
    const up = responsivePolicy(3, 0.25);
    let rising = 0;
    let falling = 0;
    // Every household-month of the run, as each household saw it.
    const seen: HouseholdObservation[] = [];
    simulateEconomy({
      params: run.final.params,
      seed: 3,
      policy: { id: "spy", decide: (o) => (seen.push(o), heuristic.decide(o)) },
    });
    for (const o of seen) {
      const h = heuristic.decide(o);
      const r = up.decide(o);
      expect(r.consumption).toBe(h.consumption);
      const prev = o.finances.previousWageOffer;
      if (prev === null || prev === o.finances.wageOffer) expect(r.work).toBe(h.work);
      else if (o.finances.wageOffer > prev) {
        rising++;
        expect(r.work).toBeCloseTo(Math.min(1, h.work + 0.25), 12);
      } else {
        falling++;
        expect(r.work).toBeCloseTo(Math.max(0, h.work - 0.25), 12);
      }
    }
    expect(rising).toBeGreaterThan(0);
    expect(falling).toBeGreaterThan(0);
  });

  it("random households decide from the seed, the household and the month, whatever the order of asking", () => {
    const policy = householdRule("random", 9)!;
    const run = simulateEconomy({ params: economyParams({ households: 4, months: 3, skillBatches: 5 }), seed: 9, policy });
    const again = simulateEconomy({ params: run.final.params, seed: 9, policy: householdRule("random", 9)! });
    expect(again.final.history).toEqual(run.final.history);
    const other = simulateEconomy({ params: run.final.params, seed: 9, policy: householdRule("random", 10)! });
    expect(other.final.history).not.toEqual(run.final.history);
  });
});

describe("the economy's room scenarios", () => {
  it("take the economy's parameters and the seats' rule as options, with a room's default population", async () => {
    const factory = await loadScenario("economy");
    const s = await factory.create(4);
    expect((s.initialState as EconomyState).names).toHaveLength(ROOM_HOUSEHOLDS);
    // The seats nobody takes are the demonstration's households, the ones whose economy shows the Phillips curve.
    expect(s.title).toBe(`Economy: ${ROOM_HOUSEHOLDS} households, 240 months (${DEFAULT_HOUSEHOLD_RULE} households)`);
    const small = await factory.create(4, { households: 3, months: 12, rule: "fixed:1,0.5", skillBatches: 5 });
    expect(small.title).toBe("Economy: 3 households, 12 months (fixed:1,0.5 households)");
    const episode = await runEpisode(small.world, { seed: 4, initialState: small.initialState, agents: small.scripted, maxSteps: small.maxSteps! });
    expect(episode.end).toBe("terminal");
    expect(episode.turns.every((t) => t.actionText === "decides to work with propensity 1.00 and to spend 0.50 of its money")).toBe(true);
  });

  it("refuse options that are not the economy's, naming the field", async () => {
    const schema = (await loadScenario("economy")).options!;
    const issue = (x: unknown) => {
      const r = schema.safeParse(x);
      return r.success ? "" : `${r.error.issues[0]!.path.join(".")}: ${r.error.issues[0]!.message}`;
    };
    expect(issue({ households: 101 })).toMatch(/^households: /);
    expect(issue({ rule: "clever" })).toMatch(/^rule: unknown household rule "clever" \(rules: heuristic, responsive\[:K\], fixed\[:W,C\], random\)/);
    expect(issue({ householdz: 3 })).toMatch(/householdz/);
    expect(issue({ bracketRates: [0.1] })).toMatch(/^bracketRates: 1 rates for 7 brackets/);
  });

  it("send each month's statistics, and at each year's end its indicators and the correlations so far", async () => {
    const s = await (await loadScenario("economy")).create(2, { households: 5, months: 36, skillBatches: 5 });
    const episode = await runEpisode(s.world, { seed: 2, initialState: s.initialState, agents: s.scripted, maxSteps: s.maxSteps! });
    const data = episode.steps.flatMap((st) => st.events.map((e) => e.data as MonthEventData));
    expect(data.map((d) => d.stats.month)).toEqual(Array.from({ length: 36 }, (_, i) => i + 1));
    const yearEnds = data.filter((d) => d.year !== null);
    expect(yearEnds.map((d) => [d.stats.month, d.year!.year])).toEqual([
      [12, 1],
      [24, 2],
      [36, 3],
    ]);
    const final = episode.finalState as EconomyState;
    const fast = simulateEconomy({ params: final.params, seed: 2, policy: householdRule(DEFAULT_HOUSEHOLD_RULE, 2)! });
    expect(yearEnds[2]!.year).toEqual(fast.years[2]);
    expect(yearEnds[2]!.phillips).toBe(fast.phillips);
    expect(data[5]!.phillips).toBeNull();
  });

  it("list a grid of decisions, each one valid", async () => {
    const s = await (await loadScenario("economy")).create(1, { households: 2, months: 2 });
    const options = s.world.options!(s.initialState, "household-1")!;
    expect(options).toHaveLength(25);
    for (const o of options) expect(s.world.actionSchema(s.initialState, "household-1").safeParse(o).success).toBe(true);
  });
});

describe("decision points through the registry", () => {
  const params = economyParams({ households: 10, months: 30, skillBatches: 5 });

  it("generate writes the points a seed gives", async () => {
    const gen = await loadGenerator("economy");
    const out = join(tmp(), "points.jsonl");
    const set = await gen.generate(5, 3, out);
    expect(set.data).toBe(out);
    expect(set.files).toEqual([{ path: out, text: serializeDecisionPoints(generateDecisionPoints({ params: economyParams(), seed: 3, count: 5 })) }]);
  });

  it("the benchmark reads a file with its lines, judges by the strict format and the utility, and reports the seed's columns", async () => {
    const points = generateDecisionPoints({ params, seed: 1, count: 6 });
    const file = join(tmp(), "p.jsonl");
    writeFileSync(file, serializeDecisionPoints(points));
    const b = await loadBenchmark("economy");
    const items = await b.load(file);
    expect(items.map((i) => [i.id, i.source.line, i.answer])).toEqual(points.map((p, k) => [p.id, k + 1, decisionJson(p.best)]));
    const item = items[0]!;
    expect(b.judge(item, item.answer as string)).toMatchObject({ correct: true, score: 1 });
    expect(b.judge(item, "```json\n" + (item.answer as string) + "\n```")).toMatchObject({ correct: false, score: 0, detail: { format: false, reward: -1 } });
    const idle = b.judge(item, '{"work": 0, "consumption": 0}');
    const expected = scoreDecision(points[0]!, { work: 0, consumption: 0 }).reward;
    expect(idle).toMatchObject({ score: expected, correct: expected >= NEAR_BEST });
    expect(() => b.task(item, "simulation")).toThrow(/vanilla mode only/);
    const task = b.task(item, "vanilla");
    expect(task.prompt).toContain("Answer with JSON only");
    expect(task.candidates).toHaveLength(25);

    const replies = items.map((it, k) => (k === 0 ? "not json" : (it.answer as string)));
    const m = b.metrics!(items, replies.map((r, k) => b.judge(items[k]!, r)));
    expect(m.parseRate).toBeCloseTo(5 / 6, 12);
    expect(m.formatFailures).toBeCloseTo(1 / 6, 12);
    expect(m.reward).toBeCloseTo((5 - 1) / 6, 12);
    expect(m.workMean).toBeCloseTo(points.slice(1).reduce((a, p) => a + p.best.work, 0) / 5, 12);
  });

  it("the simulation agent answers as EconAgent's heuristic does, from the view alone", async () => {
    const points = generateDecisionPoints({ params, seed: 2, count: 3 });
    const file = join(tmp(), "p.jsonl");
    writeFileSync(file, serializeDecisionPoints(points));
    const b = await loadBenchmark("economy");
    const solver = await loadSolver("economy");
    for (const item of (await b.load(file)) as EconomyBenchItem[]) {
      const answer = (await solver(b.task(item, "vanilla"))).answer;
      expect(answer).toBe(decisionJson(heuristicPolicy(0).decide(item.point.view)));
    }
    expect(() => solver({ benchmark: "economy", itemId: "x", mode: "vanilla", story: "hello", question: "?", prompt: "" })).toThrow(/story is not the household's view/);
  });

  it("a trainer's points reward any action with its normalized utility", async () => {
    const set = await loadDecisions("economy");
    const points = generateDecisionPoints({ params: economyParams(), seed: 5, count: 4 });
    const scored = await set.points(4, 5);
    expect(scored.map((s) => s.id)).toEqual(points.map((p) => p.id));
    const s = scored[0]!;
    expect(s.reward(s.best)).toBeCloseTo(1, 9);
    expect(s.reward({ work: 0, consumption: 0 })).toBeCloseTo(scoreDecision(points[0]!, { work: 0, consumption: 0 }).reward, 12);
    expect(s.observation).toContain('{"work": w, "consumption": c}');
    expect(s.context.socialized_context[0]!.actions[0]).toMatch(/^household-\d+: decides to work/);
    await expect(loadDecisions("tomi")).rejects.toThrow(/the tomi world has no decision points of its own \(worlds with one: economy, rec\)/);
  });
});
