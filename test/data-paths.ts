/**
 * Where the shared benchmark data lives (never copied into the repo): $SOCIALWORLD_TOM_DATA, or a
 * `shared/data/tom` folder beside the checkout or one level further up (benchmarks/tom-data.ts).
 */
import { join } from "node:path";
import { findTomData } from "../measurements/tom-data.js";

export const TOM_DATA = findTomData();

export function tomData(...parts: string[]): string {
  if (!TOM_DATA) throw new Error("benchmark data not found: set SOCIALWORLD_TOM_DATA or put shared/data/tom beside the checkout");
  return join(TOM_DATA, ...parts);
}

if (!TOM_DATA) console.warn("[socialworld tests] shared/data/tom not found: tests on the official data files are skipped");
