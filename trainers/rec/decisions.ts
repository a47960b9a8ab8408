/**
 * The recommendation world's decision points with SASRec among the recallers the policy weighs
 * (pop, itemknn, bpr, sasrec): what `train grpo --world rec` learns from. The world fits its own
 * three; SASRec needs the model runtime, so it is added here, seeded by the points' seed.
 */
import { recDecisionSet, type ExtraRecaller } from "../../worlds/rec/index.js";
import { fitSasrec, type SasrecOptions } from "./sasrec.js";

export function sasrecRecaller(options: SasrecOptions = {}): ExtraRecaller {
  return { name: "sasrec", fit: (train, seed) => fitSasrec(train, { ...options, seed }) };
}

export const recDecisionsWithSasrec = recDecisionSet([sasrecRecaller()]);
