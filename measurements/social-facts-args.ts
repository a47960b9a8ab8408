/**
 * The social short prompt's facts as a measurement script's options, `--stance` and `--agreement`,
 * taken and checked as `bench social` takes them: each goes with `--context short`.
 */
import { z } from "zod";
import type { FactsOptions } from "../worlds/social/index.js";

export const FACTS = ["stance", "agreement"] as const;

/** The options' fields, for a script's schema beside its `context`. */
export const factsFields = { stance: z.boolean().default(false), agreement: z.boolean().default(false) };

type WithFacts = { readonly context: "short" | "full" } & Record<(typeof FACTS)[number], boolean>;

/** For the schema's superRefine: a fact without `--context short` is refused, naming the flag. */
export function factsNeedShort(v: WithFacts, ctx: z.RefinementCtx): void {
  for (const fact of FACTS)
    if (v[fact] && v.context !== "short") ctx.addIssue({ code: "custom", path: [fact], message: "goes with --context short (a fact of the short prompt's facts line)" });
}

/** The facts asked, as the benchmark's options (only those given). */
export function factsOf(v: WithFacts): FactsOptions {
  return Object.fromEntries(FACTS.filter((f) => v[f]).map((f) => [f, true]));
}
