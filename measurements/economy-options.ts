/** Options the economy's measurement scripts share. */
import { z } from "zod";

/** A comma-separated list of populations ("100,1000,10000"). */
export function householdList(fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((s, ctx) => {
      const ns = s.split(",").map(Number);
      if (ns.some((n) => !Number.isInteger(n) || n < 1)) ctx.addIssue({ code: "custom", message: `households must be positive integers, got "${s}"` });
      return ns;
    });
}
