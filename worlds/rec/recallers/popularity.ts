/** Popularity: an item's score is how many users interacted with it in training (RecBole's Pop). */
import type { TrainSet } from "../split.js";
import type { Recaller } from "./recaller.js";

export function fitPopularity(train: TrainSet): Recaller {
  const counts = new Float64Array(train.items);
  for (const row of train.rows) for (const i of row) counts[i]! += 1;
  return {
    name: "pop",
    score(_user, _history, out) {
      out.set(counts);
    },
  };
}
