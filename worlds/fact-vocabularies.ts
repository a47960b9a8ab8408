/**
 * Each world's fact vocabulary for the information-leak audit (worlds/core/leak-audit.ts), by
 * world name: one line per world, its module in the world's own folder. A world without a line
 * here is not audited (the audit says so).
 */
import type { FactSource } from "./core/leak-audit.js";
import type { SocializedContext } from "./core/socialized-context.js";
import { sentencesOf } from "./core/leak-audit.js";
import { fantomFacts } from "./fantom/leak-facts.js";
import { hitomFacts } from "./hitom/leak-facts.js";
import { tomiFacts } from "./tomi/leak-facts.js";

export const FACT_SOURCES: Readonly<Record<string, FactSource>> = {
  tomi: tomiFacts,
  hitom: hitomFacts,
  fantom: fantomFacts,
};

/**
 * The world whose grammar reads most of a context's world sentences (an imported context names no
 * world); undefined when none reads half of them.
 */
export function worldOfContext(context: SocializedContext): string | undefined {
  const sentences = context.socialized_context.flatMap((s) => (s.state === "none" ? [] : sentencesOf(s.state)));
  if (sentences.length === 0) return undefined;
  let best: string | undefined;
  let bestShare = 0.5;
  for (const [world, source] of Object.entries(FACT_SOURCES)) {
    const share = sentences.filter((s) => source.reads(s)).length / sentences.length;
    if (share > bestShare) {
      best = world;
      bestShare = share;
    }
  }
  return best;
}
