// Types of parity.mjs for the TypeScript tests that run it.
import type { EngineConfig, NativeModule } from "../../models/native.js";

export interface ParityResult {
  readonly preset: string;
  readonly check: string;
  readonly pass: boolean;
  readonly value: number;
  readonly limit?: number;
  readonly detail?: string;
  readonly seconds: number;
}

export const DEFAULT_ADDON: string;
export const PARITY_PRESETS: Readonly<Record<"tiny" | "1m", EngineConfig>>;
export const FP32_LIMIT: number;
export const BF16_LOGITS_LIMIT: number;
export const BF16_GRAD_COSINE: number;
export function runParity(opts: { addon: NativeModule; presets?: readonly string[]; quick?: boolean; precisions?: readonly string[]; log?: (r: ParityResult) => void }): Promise<ParityResult[]>;
export function parityTable(results: readonly ParityResult[]): string;
