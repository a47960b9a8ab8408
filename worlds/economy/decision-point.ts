/**
 * A decision point: one household at one month of a recorded economy, with everything needed to
 * score any decision it could take there (reward.ts). The file format is JSON Lines, one point
 * per line (docs/worlds/economy.md documents every field):
 *
 *   {"id": "economy:7:household-12:25", "seed": 7, "household": "household-12", "month": 25,
 *    "view": {household, finances, economy},      what the household observed (its prompt)
 *    "params": {...},                             the utility, tax and hours parameters
 *    "savings": 1234.5,                           its money before the month's income
 *    "path": {"price": [...], "wage": [...], "lumpSum": [...], "fill": [...], "interest": [...],
 *             "work": [...], "consumption": [...]},  month t first, then the horizon's months
 *    "recorded": {"work": 1, "consumption": 0.58},   what the run's household chose there
 *    "best": {"work": 1, "consumption": 0.41, "utility": 3.2}, "worst": {"utility": -4.1}}
 *
 * `path` is the latent truth a decision is scored against: the price, the household's hourly
 * wage, the redistribution, the share of wanted goods the firm could serve, the interest
 * credited at the month's end, and the household's own recorded propensities for the months
 * after (index 0 is the decision's month).
 */
import { statSync } from "node:fs";
import { z } from "zod";
import { DataError } from "../core/errors.js";
import { readTextInput } from "../core/text-input.js";
import { HouseholdDecisionSchema } from "./action.js";
import { HouseholdObservationSchema } from "./observation.js";
import { checkBrackets, EconomyParamsFields } from "./params.js";

const finite = z.number().finite();
const share = z.number().min(0).max(1);

/** The parameters a decision's utility depends on. */
export const PointParamsSchema = EconomyParamsFields.pick({
  hoursPerMonth: true,
  productivity: true,
  bracketCutoffs: true,
  bracketRates: true,
  crra: true,
  laborDisutility: true,
  discount: true,
  minConsumption: true,
}).superRefine(checkBrackets);
export type PointParams = z.infer<typeof PointParamsSchema>;

export const DecisionPathSchema = z
  .strictObject({
    price: z.array(finite.positive()).min(1),
    wage: z.array(finite.min(0)),
    lumpSum: z.array(finite.min(0)),
    fill: z.array(share),
    interest: z.array(finite),
    work: z.array(share),
    consumption: z.array(share),
  })
  .superRefine((p, ctx) => {
    const h = p.price.length;
    for (const key of ["wage", "lumpSum", "fill", "interest", "work", "consumption"] as const) {
      if (p[key].length !== h) ctx.addIssue({ code: "custom", path: [key], message: `${p[key].length} months, but price has ${h}` });
    }
  });
export type DecisionPath = z.infer<typeof DecisionPathSchema>;

export const DecisionPointSchema = z.strictObject({
  id: z.string().min(1),
  seed: z.union([z.number(), z.string()]),
  household: z.string().min(1),
  month: z.number().int().min(1),
  view: HouseholdObservationSchema,
  params: PointParamsSchema,
  savings: finite.min(0),
  path: DecisionPathSchema,
  recorded: HouseholdDecisionSchema,
  best: z.strictObject({ work: share, consumption: share, utility: finite }),
  worst: z.strictObject({ utility: finite }),
});
export type DecisionPoint = z.infer<typeof DecisionPointSchema>;

/** Reads a JSON Lines file of decision points; a bad line is an error naming the file, line and field. */
export function parseDecisionPoints(text: string, file: string): DecisionPoint[] {
  return parseDecisionPointLines(text, file).map((p) => p.point);
}

/** A decision-point file's points with the line each came from (for reports that name it). */
export function readDecisionPointFile(file: string): { point: DecisionPoint; line: number }[] {
  // A device or a pipe would be read without end (or block): only regular files are data.
  if (statSync(file, { throwIfNoEntry: false })?.isFile() === false) throw new DataError(file, {}, "not a regular file");
  return parseDecisionPointLines(readTextInput(file), file);
}

export function parseDecisionPointLines(text: string, file: string): { point: DecisionPoint; line: number }[] {
  const points: { point: DecisionPoint; line: number }[] = [];
  const seen = new Set<string>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (e) {
      throw new DataError(file, { line: i + 1 }, `not valid JSON (${(e as Error).message})`);
    }
    const r = DecisionPointSchema.safeParse(json);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      const field = issue.path.join(".") || "(line)";
      throw new DataError(file, { line: i + 1 }, `${field}: ${issue.message}`);
    }
    if (seen.has(r.data.id)) throw new DataError(file, { line: i + 1 }, `id: "${r.data.id}" appears twice`);
    seen.add(r.data.id);
    points.push({ point: r.data, line: i + 1 });
  }
  if (points.length === 0) throw new DataError(file, {}, "no decision points");
  return points;
}

export function serializeDecisionPoints(points: readonly DecisionPoint[]): string {
  return points.map((p) => JSON.stringify(p)).join("\n") + "\n";
}
