/**
 * The recallers by name, fitted on a training set: what the benchmark, the weights action and the
 * decision points share. Each reports its own progress (item-kNN by rows, BPR by epochs).
 */
import type { TrainSet } from "../split.js";
import { BPR_DEFAULTS, fitBpr, type BprOptions } from "./bpr.js";
import { fitItemKnn } from "./item-knn.js";
import { fitPopularity } from "./popularity.js";
import type { Recaller } from "./recaller.js";

export const RECALLERS = ["pop", "itemknn", "bpr"] as const;
export type RecallerName = (typeof RECALLERS)[number];

export interface FitOptions {
  readonly bpr?: BprOptions;
  /** Item-kNN's neighbours per item (default 100). */
  readonly knn?: number;
}

export function isRecallerName(name: string): name is RecallerName {
  return (RECALLERS as readonly string[]).includes(name);
}

/** Fits recaller `name`; `onProgress` gets its steps done and their total (BPR's epochs, item-kNN's rows). */
export function fitRecaller(name: RecallerName, train: TrainSet, opts: FitOptions = {}, onProgress?: (done: number, total: number) => void): Recaller {
  if (name === "pop") return fitPopularity(train);
  if (name === "itemknn") return fitItemKnn(train, opts.knn !== undefined ? { k: opts.knn } : {}, onProgress);
  const epochs = opts.bpr?.epochs ?? BPR_DEFAULTS.epochs;
  return fitBpr(train, opts.bpr, (epoch) => onProgress?.(epoch, epochs));
}
