/**
 * A GRPO run from folders to folders, shared by `train grpo` and the server's self-play: start
 * from a checkpoint (or resume OUT's latest, refusing other settings or data), keep the frozen
 * reference in OUT/reference/, register the run in the store and log its rollouts there, train,
 * and close the run with its outcome.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkpointFiles, loadCheckpoint, saveCheckpoint } from "../../models/checkpoint.js";
import { PolicyModel } from "../../models/model.js";
import { EpisodeLog, setTornLineAsideIn } from "../../store/episode-log.js";
import { DataError } from "../../worlds/core/errors.js";
import type { RunStore } from "../../store/run-store.js";
import { naming } from "../../store/io-error.js";
import { writeFileAtomic } from "../../store/write-atomic.js";
import { claimFolder } from "../../store/folder-claim.js";
import { listCheckpoints, resumeFolder, settingsMismatch } from "../common/checkpoint-folders.js";
import { loraCheckpoint, resumedCheckpoint, trainableSummary } from "../common/lora-run.js";
import type { LoraSettings } from "../../models/lora-settings.js";
import type { GrpoConfig } from "./config.js";
import type { PointSource } from "./decision-point.js";
import type { StepMetrics } from "./metrics.js";
import { readGrpoState, referenceDir } from "./state.js";
import { loadOrFindUnsolved, SubsetSource, unsolvedPoints } from "./difficulty.js";
import { NativeCompleter } from "../../models/generate.js";
import { grpoSettings, trainGrpo, type GrpoResult } from "./trainer.js";

export class SettingsMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SettingsMismatch";
  }
}

export interface SessionOptions {
  readonly out: string;
  /** The checkpoint to start from (ignored when resuming). */
  readonly model?: string;
  /** The reference policy for the KL (default: the starting model). Self-play keeps its first policy. */
  readonly referenceModel?: string;
  /**
   * Train a LoRA adapter of `model` instead of every weight: the base is frozen, the adapter alone
   * is checkpointed (PEFT's layout), and the reference policy is the base itself (the adapter set
   * aside for its passes), so no copy of it is kept.
   */
  readonly lora?: LoraSettings;
  /** A LoRA run's starting adapter (self-play's previous round) instead of a new one (ignored when resuming). */
  readonly loraFrom?: string;
  readonly source: PointSource & { markLogged?(contextIds: Iterable<string>): void };
  readonly config: GrpoConfig;
  /** "auto": OUT's latest checkpoint if there is one; or a checkpoint folder. */
  readonly resume?: string;
  /**
   * Another run's checkpoint folder (`checkpoint-N/`) that this run goes on from, on its own data
   * and in its own OUT: its weights (a LoRA run: its adapter), AdamW moments, update count (the
   * bias correction's and the schedule's position), step and data position, so that the two runs
   * are one optimizer's path, as a resume is. `config.steps` are the steps this run adds. Every
   * setting but the data and the steps must be the checkpoint's. Self-play's `continueTraining`
   * rounds. Ignored when OUT has a checkpoint to resume.
   */
  readonly continueFrom?: string;
  /**
   * Removes the checkpoints a former run left in OUT once OUT is claimed (resume off): left there,
   * a later resume auto would go on from the former run's newest instead of this one's.
   */
  readonly afresh?: boolean;
  readonly saveEvery: number;
  readonly keep: number;
  /** Where the rollouts are logged (none: not logged). */
  readonly store?: RunStore;
  readonly title?: string;
  /** More of what the store records of the run (self-play: a private room's rounds are `visibility: "private"`). */
  readonly runParams?: Record<string, unknown>;
  readonly onStep?: (m: StepMetrics) => void;
  readonly onStart?: (info: { runId: string | null; startStep: number; resumedFrom: string | null; source: string; trainable: string }) => void;
  /** Progress of the difficulty filter (skipSolved). */
  readonly onFilter?: (done: number, total: number) => void;
  readonly signal?: AbortSignal;
}

export interface SessionResult extends GrpoResult {
  readonly runId: string | null;
  readonly resumedFrom: string | null;
}

export async function runGrpoSession(o: SessionOptions): Promise<SessionResult> {
  mkdirSync(o.out, { recursive: true });
  // OUT for this run alone: a second run on it by mistake stops here (FolderInUse).
  const claim = await claimFolder(o.out);
  try {
    if (o.afresh) for (const c of listCheckpoints(o.out)) rmSync(c.dir, { recursive: true, force: true });
    return await runClaimed(o);
  } finally {
    claim.release();
  }
}

async function runClaimed(o: SessionOptions): Promise<SessionResult> {
  const resumeDir = resumeFolder(o.out, o.resume);
  const continueDir = resumeDir ? undefined : o.continueFrom;
  let c = o.config;

  let ck;
  let start = { step: 0, cursor: 0, updates: 0 };
  let runId: string | null = null;
  const lora = o.lora && o.model ? { settings: o.lora, base: resolve(o.model) } : undefined;
  if (o.lora && !o.model) throw new Error("a LoRA run needs its base model");
  if (continueDir) {
    const state = readGrpoState(continueDir);
    const why = settingsMismatch(continueDir, withoutRunLength(state.settings), withoutRunLength(grpoSettings(c, o.source.dataId, lora)));
    if (why) throw new SettingsMismatch(`${why.replace(/; resume with .*$/, "")}: a run that continues it needs the same settings (its data and steps may differ)`);
    if (state.settings.lora !== undefined && !lora) throw new SettingsMismatch(`${continueDir} was trained with --lora: a run that continues it trains the same adapter`);
    ck = resumedCheckpoint(continueDir, lora, c.seed);
    // The data position goes on only over the same data: on other data (a self-play round's new
    // episodes) a position part-way through the checkpoint's pass would start this run inside a
    // pass over its own points, and draw some twice before others once.
    start = { step: state.step, cursor: state.settings.data === o.source.dataId ? state.cursor : 0, updates: state.updates };
    // The trainer counts steps from the run's first: this run ends `steps` after the checkpoint.
    c = { ...c, steps: state.step + c.steps };
  } else if (resumeDir) {
    // A continuing run resumed in its own OUT counts its steps as it did when it started.
    if (o.continueFrom) c = { ...c, steps: readGrpoState(o.continueFrom).step + c.steps };
    const state = readGrpoState(resumeDir);
    const why = settingsMismatch(resumeDir, state.settings, grpoSettings(c, o.source.dataId, lora));
    // A LoRA checkpoint holds only the adapter: it is no model to start a new run from.
    if (why) throw new SettingsMismatch(state.settings.lora === undefined ? `${why} (or start a new run from it with --model ${resumeDir})` : why);
    if (state.settings.lora !== undefined && !lora) throw new SettingsMismatch(`${resumeDir} was trained with --lora: resume with the same --lora and --model`);
    if (state.settings.generation !== undefined && c.generation === "joint") throw new SettingsMismatch(`${resumeDir} was trained with --generation ${String(state.settings.generation)}: resume with the same --generation`);
    if (state.settings.credit !== undefined && c.credit === "reply") throw new SettingsMismatch(`${resumeDir} was trained with --credit ${String(state.settings.credit)}: resume with the same --credit`);
    ck = resumedCheckpoint(resumeDir, lora, c.seed);
    start = { step: state.step, cursor: state.cursor, updates: state.updates };
    runId = state.runId;
  } else {
    if (!o.model) throw new Error("a GRPO run needs a model to start from");
    ck = lora ? loraCheckpoint(lora.base, lora.settings, c.seed, undefined, o.loraFrom) : loadCheckpoint(o.model);
  }
  const files = checkpointFiles(ck);

  let reference: Pick<PolicyModel, "policyPass"> | undefined;
  if (c.klCoef > 0 && lora) {
    const policy = ck.model;
    reference = { policyPass: (batch, backward, opts) => policy.withoutAdapter(() => policy.policyPass(batch, backward, opts)) };
  } else if (c.klCoef > 0) {
    const dir = referenceDir(o.out);
    if (resumeDir) {
      if (!existsSync(join(dir, "config.json"))) throw new SettingsMismatch(`${dir} is missing: the run's reference policy is needed to resume`);
      reference = loadCheckpoint(dir).model;
    } else if (o.referenceModel) {
      const ref = loadCheckpoint(o.referenceModel);
      saveCheckpoint(dir, ref.model, checkpointFiles(ref));
      reference = ref.model;
    } else {
      saveCheckpoint(dir, ck.model, files);
      const policy = ck.model;
      const copy = new PolicyModel(ck.config, { device: policy.device });
      copy.updateParams((p) => p.set(policy.readParams()), { overwrite: true });
      reference = copy;
    }
  }

  // Difficulty filtering: with the starting policy, before any update (a resumed run reads the list back).
  let source: PointSource & { markLogged?(ids: Iterable<string>): void } = o.source;
  if (c.skipSolved) {
    const unsolved = await loadOrFindUnsolved(o.out, o.source, resumeDir !== undefined, () =>
      unsolvedPoints(o.source, new NativeCompleter("grpo-filter", ck.model, ck.tokenizer), ck.tokenizer, c, ck.model.engine.maxPositionEmbeddings, o.onFilter),
    );
    source = new SubsetSource(o.source, unsolved, c.keepSolved > 0 || Object.values(c.keepSolvedByKind).some((p) => p > 0));
  }

  let log: EpisodeLog | undefined;
  if (o.store) {
    let run = runId ? o.store.get(runId) : undefined;
    if (run) {
      const kept = supersedeAfter(o.store.episodesPath(run), start.step);
      source.markLogged?.(kept);
      run = await o.store.update(run.id, { status: "running" });
    } else {
      run = await o.store.create("grpo", o.title ?? `GRPO: ${source.description}`, { ...source.runParams, ...o.runParams, trainer: "grpo", description: source.description, out: o.out, config: c });
    }
    runId = run.id;
    log = new EpisodeLog(o.store.episodesPath(run));
  }
  o.onStart?.({ runId, startStep: start.step, resumedFrom: resumeDir ?? null, source: source.description, trainable: trainableSummary(ck.model) });
  let result: GrpoResult;
  try {
    result = await trainGrpo({
      out: o.out,
      model: ck.model,
      tokenizer: ck.tokenizer,
      files,
      ...(reference ? { reference } : {}),
      ...(lora ? { lora } : {}),
      source,
      config: c,
      saveEvery: o.saveEvery,
      keep: o.keep,
      start,
      ...(log && runId ? { log: { episodes: log, runId } } : {}),
      ...(o.onStep ? { onStep: o.onStep } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    });
  } catch (err) {
    log?.close();
    if (o.store && runId) await o.store.update(runId, { status: "failed", finishedAt: new Date().toISOString(), error: (err as Error).message });
    throw err;
  }
  log?.close();
  if (o.store && runId) {
    await o.store.update(runId, {
      status: result.interrupted ? "interrupted" : "done",
      finishedAt: new Date().toISOString(),
      summary: { steps: result.steps, ...(result.last ? { reward: result.last.reward, accuracy: result.last.accuracy, kl: result.last.kl } : {}) },
    });
  }
  return { ...result, runId, resumedFrom: resumeDir ?? null };
}

/** A run's settings without what a continuing run may change: its data and its length. */
function withoutRunLength(settings: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { data: _data, steps: _steps, ...rest } = settings;
  return rest;
}

/**
 * A resumed run samples again the steps after its checkpoint: their records move from the log to
 * episodes.superseded.jsonl beside it (kept, not lost), so the log holds each step once. Returns
 * the context ids the kept records already carry.
 */
export function supersedeAfter(path: string, step: number): string[] {
  if (!existsSync(path)) return [];
  setTornLineAsideIn(path);
  const lines = readFileSync(path, "utf8").split("\n");
  lines.pop(); // after the last newline: nothing, now that a torn line is set aside
  const kept: string[] = [];
  const moved: string[] = [];
  const contexts: string[] = [];
  for (const [i, line] of lines.entries()) {
    let rec: { turns?: { info?: { grpo?: { step?: number } } }[]; context_id?: string; socialized_context?: unknown };
    try {
      rec = JSON.parse(line) as typeof rec;
    } catch {
      // Dropping it when the log is rewritten below would lose it.
      throw new DataError(path, { line: i + 1 }, "not valid JSON");
    }
    const s = rec.turns?.[0]?.info?.grpo?.step;
    if (s !== undefined && s > step) moved.push(line);
    else {
      kept.push(line);
      if (rec.context_id && rec.socialized_context) contexts.push(rec.context_id);
    }
  }
  if (moved.length > 0) {
    const aside = path.replace(/\.jsonl$/, ".superseded.jsonl");
    naming(aside, () => writeFileSync(aside, moved.map((l) => l + "\n").join(""), { flag: "a" }));
    writeFileAtomic(path, kept.map((l) => l + "\n").join(""));
  }
  return contexts;
}
