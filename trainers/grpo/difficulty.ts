/**
 * Offline difficulty filtering (as RL recipes for reasoning models do before training): the
 * starting policy answers every decision point greedily, and the points it already gets right
 * (well-formed and an exact match) are left out, so that the rollouts go to what it cannot do yet
 * rather than to sharpening what it can. The kept points are written to OUT/unsolved.json, which a
 * resumed run reads back (its model is no longer the starting one).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writeJson } from "../../models/checkpoint.js";
import type { NativeCompleter } from "../../models/generate.js";
import type { PolicyTokenizer } from "../../models/tokenizer.js";
import type { EpisodeLog } from "../../store/episode-log.js";
import { DataError } from "../../worlds/core/errors.js";
import { Rng } from "../../worlds/core/rng.js";
import { readJsonFile } from "../common/checkpoint-folders.js";
import type { GrpoConfig } from "./config.js";
import type { DecisionPoint, PointSource, ScoredReply } from "./decision-point.js";
import { scoreGroup } from "./reward.js";
import { batchBudgets, pointDecoding, preparePrompt, replyTokens, sampleByBudget } from "./rollout.js";

const UnsolvedFileSchema = z.object({ data: z.string(), total: z.number().int(), unsolved: z.array(z.number().int().nonnegative()) });

export function unsolvedFile(out: string): string {
  return join(out, "unsolved.json");
}

/**
 * Indices of the points the policy does not answer correctly when greedy, plus a seeded share
 * (`keepSolved`) of those it does: a replay against forgetting. Under dynamic sampling a solved
 * point costs nothing while all its samples stay right, and pulls the policy back as soon as some
 * go wrong.
 */
export async function unsolvedPoints(
  source: PointSource,
  completer: NativeCompleter,
  tokenizer: PolicyTokenizer,
  c: GrpoConfig,
  maxPositions: number,
  onProgress?: (done: number, total: number) => void,
): Promise<number[]> {
  const solved: boolean[] = [];
  const batch = 64;
  for (let start = 0; start < source.size; start += batch) {
    const idx = Array.from({ length: Math.min(batch, source.size - start) }, (_, i) => start + i);
    const points = await Promise.all(idx.map((i) => source.point(i)));
    // Under the grammar and budget the rollouts sample with, so that "solved" means what training would see.
    const decodings = points.map((p) => pointDecoding(p, tokenizer, c));
    const prepared = points.map((p, i) => preparePrompt(p, tokenizer, replyTokens(decodings[i]!), maxPositions));
    const fits = prepared.map((p) => p.fits);
    const asked = prepared.filter((p) => p.fits).map((p) => p.ids);
    const askedDecodings = decodings.filter((_, i) => fits[i]);
    const grammars = askedDecodings.map((d) => d.grammar);
    const constrained = grammars.some((g) => g);
    const replies = await sampleByBudget(batchBudgets(askedDecodings, c.maxNewTokens), (rows, maxNewTokens) =>
      completer.complete(
        rows.map((r) => asked[r]!),
        { maxNewTokens, temperature: 0 },
        undefined,
        constrained ? rows.map((r) => grammars[r]) : undefined,
      ),
    );
    let k = 0;
    await Promise.all(
      points.map(async (p, i) => {
        // A point too long for the model stays in (the trainer reports it); it is not solved.
        if (!fits[i]) return (solved[idx[i]!] = false);
        const r = replies[k++]!;
        const [s] = await scoreGroup(p, [{ text: r.text, tokens: r.tokens.length, finish: r.finishReason, logprob: 0 }], { ...c, maxNewTokens: decodings[i]!.budget });
        solved[idx[i]!] = s!.format && s!.exact === 1;
      }),
    );
    onProgress?.(Math.min(start + batch, source.size), source.size);
  }
  const byKind = c.keepSolvedByKind;
  // Own keys only: a kind named like an Object method ("constructor") is no share.
  const shareOf = (kind: string) => (Object.hasOwn(byKind, kind) ? byKind[kind]! : c.keepSolved);
  return pointsToTrain(solved, (i) => shareOf(source.kind?.(i) ?? ""), c.seed);
}

/**
 * The kinds of `source`'s points, sorted (none when it names no kinds). Why: keepSolvedByKind is
 * checked against them before the greedy pass, since a misspelt type would otherwise fall back
 * to keepSolved without a word, and the run would train on another pool than the one asked for.
 */
export function pointKinds(source: PointSource): string[] {
  if (!source.kind) return [];
  const kinds = new Set<string>();
  for (let i = 0; i < source.size; i++) kinds.add(source.kind(i));
  return [...kinds].sort();
}

/**
 * The unsolved points' indices, plus a seeded share of the solved ones: `keepSolved`, or for
 * point i `keepSolved(i)` (its kind's share).
 */
export function pointsToTrain(solved: readonly boolean[], keepSolved: number | ((index: number) => number), seed: number): number[] {
  const shareOf = typeof keepSolved === "number" ? () => keepSolved : keepSolved;
  // One draw per solved point kept with a share above 0, in order, so the choice depends on the seed and the data only.
  const keep = Rng.seeded(`keep-solved|${seed}`);
  const out: number[] = [];
  solved.forEach((ok, i) => {
    const share = ok ? shareOf(i) : 0;
    if (!ok || (share > 0 && keep.chance(share))) out.push(i);
  });
  return out;
}

/** The unsolved points of a run: computed and saved on a fresh start, read back on a resume. */
export async function loadOrFindUnsolved(out: string, source: PointSource, resumed: boolean, find: () => Promise<number[]>): Promise<number[]> {
  const file = unsolvedFile(out);
  if (resumed) {
    if (!existsSync(file)) throw new DataError(file, {}, "missing: the run filtered its decision points (skipSolved) and resuming needs the list");
    const saved = readJsonFile(file, UnsolvedFileSchema, "the list of unsolved points");
    if (saved.data !== source.dataId || saved.total !== source.size) throw new DataError(file, { field: "data" }, "was written for other data");
    return saved.unsolved;
  }
  const unsolved = await find();
  writeJson(file, { data: source.dataId, total: source.size, unsolved });
  return unsolved;
}

/** A source restricted to some of its points (in their order). */
export class SubsetSource implements PointSource {
  readonly description: string;
  readonly dataId: string;
  readonly size: number;
  readonly runParams: Record<string, unknown>;

  constructor(
    private readonly base: PointSource & { markLogged?(ids: Iterable<string>): void },
    private readonly indices: readonly number[],
    /** Whether keepSolved put some solved points back (the description says so). */
    keptSolved = false,
  ) {
    if (indices.length === 0) throw new Error(`the policy already answers all ${base.size} decision points correctly: nothing left to train on (drop skipSolved)`);
    this.size = indices.length;
    this.description = `${base.description}, the ${indices.length} the starting policy gets wrong${keptSolved ? " or keepSolved kept" : ""}`;
    this.dataId = createHash("sha256").update(base.dataId).update(JSON.stringify(indices)).digest("hex").slice(0, 16);
    this.runParams = { ...base.runParams, unsolved: indices.length };
  }

  point(index: number): Promise<DecisionPoint> {
    return this.base.point(this.indices[index]!);
  }

  kind(index: number): string {
    return this.base.kind?.(this.indices[index]!) ?? "";
  }

  markLogged(ids: Iterable<string>): void {
    this.base.markLogged?.(ids);
  }

  logGroup(log: EpisodeLog, runId: string, point: DecisionPoint, replies: readonly ScoredReply[], meta: { step: number; group: number; prompt: string }): Promise<void> {
    return this.base.logGroup(log, runId, point, replies, meta);
  }
}
