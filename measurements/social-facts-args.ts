/**
 * The social short prompt's facts (worlds/social/facts.ts's registry: `--stance`, `--agreement`...)
 * as a measurement script's options, taken and checked as `bench social` takes them: each goes
 * with `--context short`.
 */
import { z } from "zod";
import { FACT_KEYS, factHelp, factWithoutShort, NEEDS_SHORT, SOCIAL_FACTS, type FactKey, type FactsOptions } from "../worlds/social/index.js";

/** The options' fields, for a script's schema beside its `context`. */
export const factsFields = Object.fromEntries(FACT_KEYS.map((k) => [k, z.boolean().default(false)])) as Record<FactKey, z.ZodDefault<z.ZodBoolean>>;

/** The options' help lines, for a script's usage text (`indent`: the column the help starts at). */
export function factsUsage(indent: number): string {
  return SOCIAL_FACTS.map((f) => `  ${`--${f.key}`.padEnd(indent - 2)}${factHelp(f)}`).join("\n");
}

type WithFacts = { readonly context: "short" | "full" } & Record<FactKey, boolean>;

/** For the schema's superRefine: a fact without `--context short` is refused, naming the flag. */
export function factsNeedShort(v: WithFacts, ctx: z.RefinementCtx): void {
  const lone = factWithoutShort(v.context, v);
  if (lone) ctx.addIssue({ code: "custom", path: [lone], message: NEEDS_SHORT });
}

/** The facts asked, as the social prompt's options (only those given). */
export function factsOf(v: WithFacts): FactsOptions {
  return Object.fromEntries(FACT_KEYS.filter((f) => v[f]).map((f) => [f, true]));
}
