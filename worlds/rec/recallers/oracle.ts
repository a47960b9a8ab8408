/**
 * The oracle: knows the generator's latent truth (preferences.ts) and scores each item by its
 * true utility for the user's next choice, given the last item of the history. The generator
 * draws the next item from the unseen ones with probability proportional to exp(utility), so this
 * ranking (history masked) is the most probable next items in order: the ceiling of any recaller.
 */
import type { Preferences } from "../preferences.js";
import { utility } from "../preferences.js";
import type { RecSplit } from "../split.js";
import type { Recaller } from "./recaller.js";

export class OracleMismatch extends Error {}

export function oracleRecaller(prefs: Preferences, split: RecSplit): Recaller {
  const items = new Map(prefs.items.map((i) => [i.id, i]));
  const users = new Map(prefs.users.map((u) => [u.id, u]));
  const itemTruth = split.items.map((m) => {
    const t = items.get(m.id);
    if (!t) throw new OracleMismatch(`the preferences have no item ${m.id}: they are not the truth of this data`);
    return t;
  });
  const userTruth = split.users.map((u) => {
    const t = users.get(u.user);
    if (!t) throw new OracleMismatch(`the preferences have no user ${u.user}: they are not the truth of this data`);
    return t.vector;
  });
  return {
    name: "oracle",
    score(user, history, out) {
      const last = history.length ? itemTruth[history[history.length - 1]!]!.vector : undefined;
      const taste = userTruth[user]!;
      for (let i = 0; i < itemTruth.length; i++) out[i] = utility(prefs, taste, last, itemTruth[i]!);
    },
  };
}
