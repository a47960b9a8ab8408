import { describe, expect, it } from "vitest";
import { runEpisode } from "../../worlds/core/loop.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { validateSocializedContext } from "../../worlds/core/socialized-context.js";
import {
  EconomyWorld,
  economyParams,
  fixedPolicy,
  flowUtility,
  heuristicDecision,
  heuristicPolicy,
  HouseholdObservationSchema,
  initialEconomy,
  simulateEconomy,
  economyScenario,
  householdAgent,
  randomPolicy,
  type HouseholdObservation,
} from "../../worlds/economy/index.js";

async function playLoop(households: number, months: number, seed: number, rule: string) {
  const s = economyScenario(seed, { households, months, skillBatches: 20 }, rule);
  const episode = await runEpisode(s.world, { seed, initialState: s.initialState, agents: s.scripted, maxSteps: s.maxSteps });
  return { params: s.initialState.params, episode };
}

describe("the economy world", () => {
  it("runs in the game loop exactly as the fast simulation runs it", async () => {
    const { params, episode } = await playLoop(12, 30, 7, "heuristic");
    const fast = simulateEconomy({ params, seed: 7, policy: heuristicPolicy(7) });
    expect(episode.end).toBe("terminal");
    expect(episode.finalState.month).toBe(30);
    expect(episode.finalState.history).toEqual(fast.final.history);
    expect(Array.from(episode.finalState.households.savings)).toEqual(Array.from(fast.final.households.savings));
    expect(fast.years).toHaveLength(2);
  });

  it("gives the same random households in the loop as in the fast simulation (they are asked in the same order)", async () => {
    const { params, episode } = await playLoop(6, 12, 5, "random");
    const fast = simulateEconomy({ params, seed: 5, policy: randomPolicy(5) });
    expect(episode.finalState.history).toEqual(fast.final.history);
    expect(episode.turns[0]!.actionText).toMatch(/^decides to work with propensity 0\.\d\d and to spend 0\.\d\d of its money$/);
  });

  it("refuses to play a household from a turn that is not one", () => {
    expect(() => householdAgent(randomPolicy(1)).act({ observation: { text: "hello" } })).toThrow(/random household: the turn has no household observation/);
  });

  it("rewards each household with its month's utility", async () => {
    const { params, episode } = await playLoop(5, 3, 2, "fixed:1,0.5");
    // Everyone works every month; the last month's reward is u(goods / 168) - 0.5, from the goods it bought.
    const turns = episode.turns.filter((t) => t.timestep === 3);
    expect(turns).toHaveLength(5);
    const h = episode.finalState.households;
    for (const t of turns) {
      const i = episode.agents.indexOf(t.agent);
      expect(h.worked[i]).toBe(1);
      expect(t.reward).toBeCloseTo(flowUtility(h.goods[i]!, 1, params), 12);
      expect(t.reward).toBeCloseTo(2 * (Math.sqrt(h.goods[i]! / 168) - 1) - 0.5, 12);
    }
    expect(episode.returns["household-1"]).toBeCloseTo(episode.steps.slice(0, 3).reduce((sum, s) => sum + s.rewards!["household-1"]!, 0), 12);
  });

  it("writes one socialized-context timestep per month, and a last one that only observes", async () => {
    const { episode } = await playLoop(3, 4, 1, "fixed:1,0.5");
    const ctx = toSocializedContext(episode);
    expect(validateSocializedContext(ctx)).toEqual([]);
    expect(ctx.agents_names).toEqual(["household-1", "household-2", "household-3"]);
    expect(ctx.socialized_context).toHaveLength(5);
    expect(ctx.socialized_context[0]!.state).toMatch(/^Economy: month 1 \(year 1\), price \$[\d,.]+, interest rate 3\.00%/);
    expect(ctx.socialized_context[0]!.actions[0]).toBe("household-1: decides to work with propensity 1.00 and to spend 0.50 of its money");
    expect(ctx.socialized_context[4]!.actions).toEqual(["household-1: none", "household-2: none", "household-3: none"]);
    expect(ctx.socialized_context[1]!.observations[1]).toMatch(/^household-2: You are household-2, one of 3 households/);
  });

  it("shows a household its own finances and public statistics, nothing of the others'", async () => {
    const { episode } = await playLoop(4, 13, 3, "heuristic");
    const world = new EconomyWorld();
    const state = episode.finalState;
    const h = state.households;
    const mine = world.observe(state, "household-1");
    const data = HouseholdObservationSchema.parse(mine.data);
    expect(data.household).toBe("household-1");
    expect(data.finances.savings).toBe(h.savings[0]);
    expect(data.finances.hourlyWage).toBe(h.wage[0]);
    expect(data.economy.lastYear?.year).toBe(1);
    // No other household's wage, savings, income or tax appears in the data or the text.
    const money = (x: number) => x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    const json = JSON.stringify(mine.data);
    for (let i = 1; i < 4; i++) {
      for (const x of [h.wage[i]!, h.savings[i]!, h.income[i]!, h.taxPaid[i]!, h.spent[i]!]) {
        if (x === 0) continue;
        expect(json).not.toContain(String(x));
        expect(mine.text).not.toContain(money(x));
        expect(mine.text).not.toContain(money(168 * x));
      }
    }
    expect(mine.text).toContain(`Your savings are $${money(h.savings[0]!)}`);
    expect(mine.text).toMatch(/Answer with JSON only, exactly two keys: \{"work": w, "consumption": c\}/);
    expect(() => world.observe(state, "household-9")).toThrow(/no household named "household-9"/);
  });

  it("ends after the last month; its no-op neither works nor spends", () => {
    const world = new EconomyWorld();
    const s = initialEconomy(economyParams({ households: 2, months: 1, skillBatches: 1 }), 0);
    expect(world.isTerminal(s)).toBe(false);
    expect(world.noop()).toEqual({ work: 0, consumption: 0 });
    expect(world.isNoop({ work: 0, consumption: 0 })).toBe(true);
    expect(world.isNoop({ work: 0, consumption: 0.1 })).toBe(false);
    expect(world.actionSchema().safeParse({ work: 1, consumption: 0.5 }).success).toBe(true);
  });
});

describe("rule-based households", () => {
  const view = (over: Partial<HouseholdObservation["finances"]> = {}): HouseholdObservation => ({
    household: "household-1",
    finances: {
      hourlyWage: 2000 / 168,
      wageOffer: 2000,
      previousWageOffer: 2000,
      worked: true,
      income: 2000,
      lastWorkIncome: 1500,
      taxPaid: 0,
      lumpSum: 0,
      savings: 4000,
      spent: 0,
      shortage: false,
      lastDecision: { work: 1, consumption: 0.5 },
      ...over,
    },
    economy: {
      month: 2,
      year: 1,
      monthOfYear: 2,
      households: 1,
      price: 50,
      previousPrice: 50,
      unemployment: 0,
      rate: 0.03,
      lastYear: null,
      bracketCutoffs: [0],
      bracketRates: [0.1],
    },
  });

  it("follow EconAgent's composite heuristic (values computed by hand in Python)", () => {
    // p^w = (2000 / (4000 * 1.03))^0.1 = 0.930279...; y = 1860.558...
    // len:  (50 / (4000 + y))^0.1 = 0.62101... -> 0.62;  cats: 0.69177... -> 0.68
    const len = heuristicDecision(view(), "len");
    expect(len.work).toBeCloseTo(0.9302791298162068, 12);
    expect(len.consumption).toBeCloseTo(0.62, 12);
    expect(heuristicDecision(view(), "cats").consumption).toBeCloseTo(0.68, 12);
    // Savings below a month's pay: always work. No savings, no income yet: the CATS rule spends 2%.
    expect(heuristicDecision(view({ savings: 100 }), "len").work).toBe(1);
    expect(heuristicDecision(view({ savings: 0, lastWorkIncome: 0 }), "cats").consumption).toBeCloseTo(0.02, 12);
  });

  it("refuse fixed propensities outside [0, 1]", () => {
    expect(() => fixedPolicy(1.2, 0.5)).toThrow(/work must be in \[0, 1\], got 1.2/);
  });
});
