/**
 * Socialized-context evaluation, as the social-world-model project's
 * `run_socialized_context_eval.py` runs it: each generated context is compared with the ground
 * truth of the same story (files paired by name), and scored
 *
 *   overall = 0.3 x structural + 0.7 x observation accuracy
 *
 * The structural score follows upstream's rules exactly (context-eval/structure.ts). Observation
 * accuracy is exact here (context-eval/observation.ts): the ground truth is the world model's
 * socialized context, which knows who perceives every event, and the generated context is aligned
 * with it by events, not by timestep index (context-eval/align.ts). An LLM judge, upstream's only
 * way, can grade it instead (context-eval/judge.ts); the exact score is still reported beside it.
 *
 * Files: a ground truth must be a valid socialized context (bad ones stop the evaluation with a
 * DataError naming file and field); a generated one is scored whatever it holds (a file that is
 * not JSON scores 0, where upstream would leave it out of the mean). A ground truth with no
 * generated file of the same name is left out with a warning, as upstream does.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { DataError } from "../worlds/core/errors.js";
import { validateSocializedContext } from "../worlds/core/socialized-context.js";
import { ForeignContextSchema, locateContext, normalizeContext, readSapFile, type SapMeta } from "../worlds/core/sap-file.js";
import { structuralScore, type StructuralScore } from "./context-eval/structure.js";
import { observationAccuracy, type ObservationScore } from "./context-eval/observation.js";
import type { ContextJudge } from "./context-eval/judge.js";
import { npMean, renderTable } from "./context-eval/table.js";
import { readTextInput } from "../worlds/core/text-input.js";

export const STRUCTURAL_WEIGHT = 0.3;
export const OBSERVATION_WEIGHT = 0.7;

export interface GroundTruthInput {
  /** The context as the file holds it (for the judge), and where it came from. */
  readonly raw: unknown;
  readonly source: string;
  readonly meta?: SapMeta;
}

export interface GeneratedInput {
  /** The parsed file (the context is found in it as in a ground truth), or why there is none. */
  readonly json?: unknown;
  readonly error?: string;
  readonly source: string;
}

export interface ContextPair {
  readonly fileId: string;
  readonly gt: GroundTruthInput;
  readonly gen: GeneratedInput;
}

export interface ContextEvalResult {
  readonly fileId: string;
  readonly structural: number;
  /** The exact score, or the judge's when one grades. */
  readonly observationAccuracy: number;
  readonly overall: number;
  readonly structure: StructuralScore;
  readonly exact: ObservationScore;
  readonly judge?: { readonly score: number; readonly reasoning: string; readonly error?: string };
  /** Where the generated context breaks the schema (reported; the structural score is upstream's). */
  readonly schemaProblems: readonly string[];
  /** Why the generated file could not be read (it scores 0). */
  readonly error?: string;
}

export interface ContextEvalReport {
  readonly results: readonly ContextEvalResult[];
  readonly mean: { readonly structural: number; readonly observationAccuracy: number; readonly overall: number };
  /** Ground truths with no generated file. */
  readonly missing: readonly string[];
  readonly observationSource: "exact" | "judge";
  readonly judge?: string;
}

/** Pairs `*.json` files of two folders by name (sorted, as upstream globs them). */
export function pairDirectories(gtDir: string, genDir: string): { pairs: ContextPair[]; missing: string[] } {
  for (const d of [gtDir, genDir]) {
    let ok = false;
    try {
      ok = statSync(d).isDirectory();
    } catch {
      throw new DataError(d, {}, "no such folder");
    }
    if (!ok) throw new DataError(d, {}, "not a folder");
  }
  const gtFiles = readdirSync(gtDir).filter((f) => f.endsWith(".json")).sort();
  if (gtFiles.length === 0) throw new DataError(gtDir, {}, "holds no .json files");
  const genFiles = new Set(readdirSync(genDir).filter((f) => f.endsWith(".json")));
  const pairs: ContextPair[] = [];
  const missing: string[] = [];
  for (const f of gtFiles) {
    const fileId = basename(f, ".json");
    if (!genFiles.has(f)) {
      missing.push(fileId);
      continue;
    }
    pairs.push({ fileId, gt: groundTruthFile(join(gtDir, f)), gen: generatedFile(join(genDir, f)) });
  }
  return { pairs, missing };
}

export function groundTruthFile(path: string): GroundTruthInput {
  const sap = readSapFile(path);
  return { raw: sap.raw, source: path, meta: sap.meta };
}

export function generatedFile(path: string): GeneratedInput {
  let text: string;
  try {
    text = readTextInput(path);
  } catch (err) {
    if (!(err instanceof DataError)) throw err;
    return { source: path, error: err.reason };
  }
  try {
    return { source: path, json: JSON.parse(text) as unknown };
  } catch (err) {
    return { source: path, error: `not valid JSON (${(err as Error).message})` };
  }
}

/** The generated context inside what was read: the whole object or the one under `socialized_context`. */
function generatedContext(gen: GeneratedInput): unknown {
  if (gen.json === undefined) return undefined;
  return locateContext(gen.json)?.sap ?? gen.json;
}

export function schemaProblems(sap: unknown): string[] {
  const parsed = ForeignContextSchema.safeParse(sap);
  if (!parsed.success) return parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(top level)"}: ${i.message}`);
  const { context, problems } = normalizeContext(parsed.data);
  return [...problems, ...validateSocializedContext(context)].slice(0, 20);
}

/** Structure and exact observation accuracy of one pair (no judge). */
export function evaluatePair(pair: ContextPair): ContextEvalResult {
  const gen = generatedContext(pair.gen);
  const structure = structuralScore(gen);
  const exact = observationAccuracy(pair.gt.raw, gen);
  const observation = pair.gen.error ? 0 : exact.accuracy;
  return {
    fileId: pair.fileId,
    structural: structure.score,
    observationAccuracy: observation,
    overall: STRUCTURAL_WEIGHT * structure.score + OBSERVATION_WEIGHT * observation,
    structure,
    exact: pair.gen.error ? { ...exact, accuracy: 0 } : exact,
    schemaProblems: pair.gen.error ? [] : schemaProblems(gen),
    ...(pair.gen.error ? { error: pair.gen.error } : {}),
  };
}

export interface EvaluateOptions {
  readonly judge?: ContextJudge;
  /** Judge calls at once (default 8). */
  readonly concurrency?: number;
  readonly missing?: readonly string[];
  readonly onResult?: (result: ContextEvalResult, done: number, total: number) => void;
  readonly signal?: AbortSignal;
}

export async function evaluateContexts(pairs: readonly ContextPair[], opts: EvaluateOptions = {}): Promise<ContextEvalReport> {
  const results: ContextEvalResult[] = new Array(pairs.length);
  let done = 0;
  let next = 0;
  const judge = opts.judge;
  const worker = async () => {
    while (next < pairs.length && !opts.signal?.aborted) {
      const i = next++;
      const pair = pairs[i]!;
      let r = evaluatePair(pair);
      if (judge && !pair.gen.error) r = await judged(r, pair, judge, opts.signal);
      results[i] = r;
      done++;
      opts.onResult?.(r, done, pairs.length);
    }
  };
  const n = judge ? Math.max(1, Math.min(opts.concurrency ?? 8, pairs.length || 1)) : 1;
  await Promise.all(Array.from({ length: n }, worker));
  const finished = results.filter((r): r is ContextEvalResult => r !== undefined);
  return {
    results: finished,
    mean: {
      structural: npMean(finished.map((r) => r.structural)),
      observationAccuracy: npMean(finished.map((r) => r.observationAccuracy)),
      overall: npMean(finished.map((r) => r.overall)),
    },
    missing: opts.missing ?? [],
    observationSource: judge ? "judge" : "exact",
    ...(judge ? { judge: judge.id } : {}),
  };
}

async function judged(r: ContextEvalResult, pair: ContextPair, judge: ContextJudge, signal?: AbortSignal): Promise<ContextEvalResult> {
  const story = pair.gt.meta?.story;
  let verdict: { score: number; reasoning: string; error?: string };
  try {
    verdict = await judge.judge(
      {
        fileId: pair.fileId,
        groundTruth: pair.gt.raw,
        generated: generatedContext(pair.gen),
        ...(story !== undefined ? { story: typeof story === "string" ? story : story.join(" ") } : {}),
        ...(pair.gt.meta?.question !== undefined ? { question: pair.gt.meta.question } : {}),
      },
      signal,
    );
  } catch (err) {
    verdict = { score: 0, reasoning: `Error: ${(err as Error).message}`, error: (err as Error).message };
  }
  return { ...r, observationAccuracy: verdict.score, overall: STRUCTURAL_WEIGHT * r.structural + OBSERVATION_WEIGHT * verdict.score, judge: verdict };
}

export function renderContextTable(report: ContextEvalReport): string {
  return renderTable(report.results.map((r) => ({ fileId: r.fileId, structural: r.structural, observation: r.observationAccuracy, overall: r.overall })));
}
