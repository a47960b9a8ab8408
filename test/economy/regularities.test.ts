/**
 * The macro regularities the issue asks the simulated economy to show, in the run `simulate
 * economy` makes by default (100 households, 240 months): the Phillips curve (unemployment
 * against wage inflation, negative) and Okun's law (the change in unemployment against real GDP
 * growth, negative), over several seeds. The default households are the responsive ones;
 * EconAgent's heuristic, the decision points' baseline, gives the opposite sign in this model
 * (docs/worlds/economy.md, Results, says why), and the test pins that too, so that the page's
 * explanation cannot silently go stale.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { DEFAULT_HOUSEHOLD_RULE, economyParams, householdRule, simulateEconomy } from "../../worlds/economy/index.js";
import { captureOutput } from "../capture.js";
import { tempDir } from "../policy/fixtures.js";

captureOutput();
const SEEDS = [0, 1, 2, 3, 4];
const params = economyParams({ households: 100, months: 240 });
const run = (rule: string, seed: number) => simulateEconomy({ params, seed, policy: householdRule(rule, seed)! });

describe("the economy's macro regularities", () => {
  it("simulate economy runs the default households unless told otherwise, and its report shows both regularities", async () => {
    const store = tempDir("sw-sim-");
    const out = join(store, "report.json");
    expect(await main(["simulate", "economy", "--households", "100", "--months", "240", "--log-households", "0", "--store", store, "--json", out, "--quiet"])).toBe(0);
    const report = JSON.parse(readFileSync(out, "utf8")) as { agent: string; phillips: number; okun: number };
    expect(report.agent).toBe(DEFAULT_HOUSEHOLD_RULE);
    expect(report.phillips).toBeLessThan(-0.3);
    expect(report.okun).toBeLessThan(-0.9);
  });

  it("the default households show the Phillips curve and Okun's law at every seed", () => {
    for (const seed of SEEDS) {
      const r = run(DEFAULT_HOUSEHOLD_RULE, seed);
      expect({ seed, negative: r.phillips! < -0.3 && r.okun! < -0.9 }).toEqual({ seed, negative: true });
    }
  });

  it("EconAgent's heuristic households give a positive Phillips correlation at every seed (their work rule reads forced saving as wealth)", () => {
    for (const seed of SEEDS) {
      const r = run("heuristic", seed);
      expect({ seed, positive: r.phillips! > 0.3 && r.okun! < -0.9 }).toEqual({ seed, positive: true });
    }
  });
});
