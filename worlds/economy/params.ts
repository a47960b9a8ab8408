/**
 * Every parameter of the economy, with its default and where the default comes from. Defaults
 * follow EconAgent (Li et al., ACL 2024) as its released code sets them: `config.yaml`,
 * `simulate.py` and the components under `ai_economist/foundation/` of
 * github.com/tsinghua-fib-lab/ACL24-EconAgent (docs/worlds/economy.md cites each equation). The
 * reward's parameters are this project's (the paper trains no household on a utility).
 *
 * One zod schema is the parameters' type, their validation and their documentation: a room or a
 * command line option is a field of it, and `EconomyParamsSchema.parse({})` is the default economy.
 */
import { z } from "zod";

/** The 2018 US federal brackets for a single filer, per year, in dollars (PeriodicBracketTax). */
const US_2018_ANNUAL_CUTOFFS = [0, 9700, 39475, 84200, 160725, 204100, 510300];
/** `usd_scaling: 12` in config.yaml: the yearly brackets become monthly ones. */
const MONTHS_PER_YEAR = 12;

/** The fields, before the checks across them (decision points pick some of them). */
export const EconomyParamsFields = z.strictObject({
  households: z.number().int().min(1).max(1_000_000).default(100).describe("Number of households (n_agents; the paper runs 100)."),
  months: z.number().int().min(1).max(12_000).default(240).describe("Months simulated (episode_length: 240 = 20 years)."),
  monthsPerYear: z.number().int().min(1).default(MONTHS_PER_YEAR).describe("Months in a year: interest, the Taylor rule and the yearly indicators work by year (period)."),
  hoursPerMonth: z.number().positive().default(168).describe("Hours a household works in a month when it works (num_labor_hours)."),
  paretoShape: z.number().positive().default(8).describe("Shape of the Pareto (Lomax) distribution of skills, i.e. initial hourly wages (pareto_param)."),
  maxSkill: z.number().gt(1).default(950).describe("Highest hourly skill; skills are min(maxSkill, (maxSkill - 1) x + 1) (payment_max_skill_multiplier)."),
  skillBatches: z
    .number()
    .int()
    .min(1)
    .default(1000)
    .describe("Skills are the mean order statistics of this many sorted samples of N draws (SimpleLabor draws 1000)."),
  initialSavings: z.number().min(0).default(0).describe("Every household's savings at the start (reset_agent_states empties them)."),
  productivity: z.number().positive().default(1).describe("Goods produced per hour worked (productivity_per_labor)."),
  maxPriceInflation: z.number().min(0).default(0.1).describe("alpha_P: the largest monthly price change, at full imbalance (max_price_inflation)."),
  maxWageInflation: z.number().min(0).default(0.05).describe("alpha_w: the largest monthly wage change, at full imbalance (max_wage_inflation)."),
  priceFloor: z.number().min(0).default(1).describe("Prices never fall below this (SimpleConsumption: max(price, 1))."),
  wageFloor: z.number().min(0).default(1).describe("Hourly wages never fall below this (SimpleConsumption: max(skill, 1))."),
  initialPrice: z
    .number()
    .positive()
    .nullable()
    .default(null)
    .describe("Price of the good at the start; null: the mean initial hourly skill, as the authors' scenario sets it."),
  bracketCutoffs: z
    .array(z.number().min(0))
    .min(1)
    .default(US_2018_ANNUAL_CUTOFFS.map((c) => c / MONTHS_PER_YEAR))
    .describe("Lower edges of the monthly tax brackets, from 0 (the 2018 US federal single-filer brackets / 12)."),
  bracketRates: z
    .array(z.number().min(0).max(1))
    .min(1)
    .default([0.1, 0.12, 0.22, 0.24, 0.32, 0.35, 0.37])
    .describe("Marginal tax rate in each bracket (us-federal-single-filer-2018-scaled)."),
  initialRate: z.number().min(0).default(0.03).describe("Yearly interest rate at the start (interest_rate = [0.03])."),
  naturalRate: z.number().default(0.01).describe("r^n: natural interest rate of the Taylor rule (SimpleSaving)."),
  inflationTarget: z.number().default(0.02).describe("pi^t: the central bank's inflation target."),
  naturalUnemployment: z.number().min(0).max(1).default(0.04).describe("u^n: natural rate of unemployment."),
  inflationWeight: z.number().default(0.5).describe("alpha_pi: weight of the inflation gap in the Taylor rule."),
  unemploymentWeight: z.number().default(0.5).describe("alpha_u: weight of the unemployment gap in the Taylor rule."),
  rateFloor: z.number().default(0).describe("The interest rate never goes below this (max(rate, 0))."),
  crra: z.number().min(0).default(0.5).describe("eta: relative risk aversion of the CRRA utility of consumption (config.yaml isoelastic_etas: 0.5)."),
  laborDisutility: z.number().min(0).default(0.5).describe("nu: utility lost in a month of full-time work."),
  discount: z.number().gt(0).max(1).default(0.99).describe("beta: monthly discount factor of the decision reward."),
  horizon: z.number().int().min(1).default(12).describe("Months over which a decision's utility is counted (the decision's month and those after it)."),
  minConsumption: z
    .number()
    .positive()
    .default(1e-3)
    .describe("Consumption (in full-time months of output) below which utility is counted at this floor (keeps log utility finite)."),
});

/** Brackets: as many rates as edges, edges increasing from 0. */
export function checkBrackets(p: { bracketCutoffs: readonly number[]; bracketRates: readonly number[] }, ctx: z.RefinementCtx): void {
  if (p.bracketRates.length !== p.bracketCutoffs.length) {
    ctx.addIssue({ code: "custom", path: ["bracketRates"], message: `${p.bracketRates.length} rates for ${p.bracketCutoffs.length} brackets` });
  }
  if (p.bracketCutoffs[0] !== 0) ctx.addIssue({ code: "custom", path: ["bracketCutoffs", 0], message: "the first bracket must start at 0" });
  for (let i = 1; i < p.bracketCutoffs.length; i++) {
    if (!(p.bracketCutoffs[i]! > p.bracketCutoffs[i - 1]!)) {
      ctx.addIssue({ code: "custom", path: ["bracketCutoffs", i], message: "bracket edges must increase" });
    }
  }
}

export const EconomyParamsSchema = EconomyParamsFields.superRefine(checkBrackets);

export type EconomyParams = z.output<typeof EconomyParamsSchema>;
export type EconomyParamsInput = z.input<typeof EconomyParamsSchema>;

/** Parameters from user input (a room's options, a command line): a clear error names the field. */
export function economyParams(input: EconomyParamsInput = {}): EconomyParams {
  const r = EconomyParamsSchema.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.length ? issue.path.join(".") : "(parameters)";
    throw new RangeError(`economy parameter ${field}: ${issue.message}`);
  }
  return r.data;
}

/** The default economy. */
export const ECONOMY_DEFAULTS: EconomyParams = economyParams();
