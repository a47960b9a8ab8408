/**
 * What the recommender is shown: the user's recent history (titles and genres, newest last), what
 * each recaller would recommend first, and the reply asked for. A user sees only their own
 * history: the held-out item and other users' histories are never in it.
 */
import type { Recaller } from "./recallers/recaller.js";
import { topK } from "./ranking.js";
import type { RecCase, RecSplit } from "./split.js";

export const HISTORY_SHOWN = 15;
export const PREVIEW = 5;

/** The request for weights over the recallers `names`. */
export function weightsRequest(names: readonly string[]): string {
  const json = `{"weights": {${names.map((n) => `"${n}": W`).join(", ")}}}`;
  return `Weigh the recallers for this user: reply with JSON only, ${json}, each W from 0 to 1. Their standardised scores are summed with these weights and the top 10 items not yet seen are recommended; the reward is NDCG@10 of the item the user watches next.`;
}

function movieLine(split: RecSplit, i: number): string {
  const m = split.items[i]!;
  return `${m.title} [${m.genres.join(", ")}]`;
}

/** The observation: history, the recallers' first picks, the request. */
export function renderObservation(split: RecSplit, c: RecCase, recallers: readonly Recaller[]): string {
  const recent = c.history.slice(-HISTORY_SHOWN);
  const lines = [`A user has watched ${c.history.length} films; the last ${recent.length}, oldest first:`, ...recent.map((i) => `- ${movieLine(split, i)}`), ""];
  const buf = new Float64Array(split.items.length);
  for (const r of recallers) {
    r.score(c.user, c.history, buf);
    lines.push(`${r.name} recommends: ${topK(buf, PREVIEW, c.history).map((i) => split.items[i]!.title).join("; ")}`);
  }
  lines.push("", weightsRequest(recallers.map((r) => r.name)));
  return lines.join("\n");
}

/** An action as the socialized context writes it. */
export function renderWeights(w: Readonly<Record<string, number>>): string {
  return `weighs the recallers ${Object.entries(w).map(([n, x]) => `${n} ${x}`).join(", ")}`;
}
