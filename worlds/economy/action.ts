/**
 * A household's monthly decision, as EconAgent asks its agents for it: JSON with exactly two
 * keys, `work` (the propensity to work) and `consumption` (the share of savings and income to
 * spend), numbers in [0, 1]. Strict: another key, a missing key, a string or a number outside
 * [0, 1] is not a decision (the strict format reward gives it -1).
 */
import { z } from "zod";

export const HouseholdDecisionSchema = z
  .strictObject({
    work: z.number().min(0).max(1).describe("Propensity to work this month, between 0 and 1 (the probability of working the month)."),
    consumption: z
      .number()
      .min(0)
      .max(1)
      .describe("Share of all your money (savings plus this month's income) to spend on essential goods, between 0 and 1."),
  })
  .describe("A household's decision for the month.");

export type HouseholdDecision = z.infer<typeof HouseholdDecisionSchema>;

/** The JSON schema a policy's decoding is constrained to. */
export const HOUSEHOLD_DECISION_JSON_SCHEMA = z.toJSONSchema(HouseholdDecisionSchema);

/** Neither work nor spend: the action that does nothing. */
export const IDLE: HouseholdDecision = Object.freeze({ work: 0, consumption: 0 });

/** What EconAgent's simulation uses when a model's reply cannot be read (work 1, spend 0.5). */
export const ECONAGENT_FALLBACK: HouseholdDecision = Object.freeze({ work: 1, consumption: 0.5 });
