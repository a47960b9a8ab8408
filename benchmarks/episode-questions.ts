/**
 * Theory-of-mind questions from a logged run (`socialworld questions`, a room's quiz): every
 * episode of the run becomes questions of every type its world asks, labelled by the world model,
 * written in the world's benchmark format. A room's episode is played again from its scenario
 * (world and seed) and its logged actions; a benchmark run's stories are read again from its data
 * file. Which worlds can is the registry's business (a world's `questions` part): no world is
 * named here.
 *
 * What is written is read back with the world's own benchmark before it is kept: every question
 * loads, and the world model, reading the file as `bench` will, gives every label written.
 */
import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { readLogPage } from "../store/log-index.js";
import type { RunRecord, RunStore } from "../store/run-store.js";
import { writeFileAtomic } from "../store/write-atomic.js";
import { DataError } from "../worlds/core/errors.js";
import { StoryMismatch, type EpisodeQuiz, type QuestionMaker } from "../worlds/core/episode-questions.js";
import { ReplayMismatch, replayLogged, type LoggedTurn } from "../worlds/core/logged-episode.js";
import { Rng } from "../worlds/core/rng.js";
import { SocializedContextSchema } from "../worlds/core/socialized-context.js";
import type { GeneratedSet } from "../worlds/core/world-entry.js";
import type { Benchmark } from "../worlds/question/benchmark.js";
import { loadBenchmark, loadQuestionMaker, loadScenario, worldsWith } from "../worlds/registry.js";

/** A run the questions cannot come from (no episodes, several worlds, a data file gone), or an option that does not fit it. */
export class QuestionsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "QuestionsError";
  }
}

interface LogRecord {
  readonly kind?: unknown;
  readonly world?: unknown;
  readonly benchmark?: unknown;
  readonly seed?: unknown;
  readonly episode?: unknown;
  readonly socialized_context?: unknown;
  readonly turns?: unknown;
  readonly result?: { readonly id?: unknown; readonly file?: unknown };
}

export interface RunQuestions {
  readonly world: string;
  readonly quizzes: readonly EpisodeQuiz[];
  /**
   * Episodes left out, with why: a log that does not replay, or an episode whose simultaneous
   * actions no story of the benchmark, one sentence at a time, can tell (a private word to someone
   * who left at the same timestep).
   */
  readonly skipped: readonly { readonly source: string; readonly reason: string }[];
}

/** The quizzes of every episode of a run, in log order; `onProgress` after each page of the log. */
export async function questionsOfRun(store: RunStore, run: RunRecord, onProgress?: (done: number, total: number) => void): Promise<RunQuestions> {
  const path = store.episodesPath(run);
  let world: string | undefined;
  const rooms: { rec: LogRecord; index: number }[] = [];
  const itemIds: string[] = [];
  let dataFile: string | undefined;
  let total = 0;
  for (let offset = 0; ; ) {
    const page = readLogPage<LogRecord & Record<string, unknown>>(path, offset, 200, { resolve: false });
    total = page.total;
    page.records.forEach((rec, i) => {
      const isRoom = rec.kind === "room_episode" && typeof rec.world === "string";
      const isItem = rec.kind === "benchmark_item" && typeof rec.benchmark === "string";
      if (!isRoom && !isItem) return;
      const w = (isRoom ? rec.world : rec.benchmark) as string;
      if (world !== undefined && w !== world) throw new QuestionsError(`run ${run.id} holds episodes of two worlds (${world}, ${w}); questions are written one world to a file`);
      world = w;
      if (isRoom) rooms.push({ rec, index: offset + i });
      else if (typeof rec.result?.id === "string") {
        itemIds.push(rec.result.id);
        if (typeof rec.result.file === "string") dataFile ??= rec.result.file;
      }
    });
    offset += page.records.length;
    onProgress?.(offset, total);
    if (page.records.length === 0 || offset >= total) break;
  }
  if (world === undefined) throw new QuestionsError(`run ${run.id} has no episodes to ask about (${total} records, none a room episode or a benchmark item)`);
  const maker = await makerOf(world);
  const quizzes: EpisodeQuiz[] = [];
  const skipped: { source: string; reason: string }[] = [];
  const scenarios = rooms.length ? await loadScenario(world) : undefined;
  for (const { rec, index } of rooms) {
    const source = `run ${run.id} record ${index}${typeof rec.episode === "number" ? ` (episode ${rec.episode})` : ""}`;
    const context = SocializedContextSchema.safeParse(rec.socialized_context);
    if (!context.success || typeof rec.seed !== "number") throw new QuestionsError(`${source}: no socialized context or seed to replay`);
    const scenario = await scenarios!.create(rec.seed);
    try {
      const episode = await replayLogged(scenario, rec.seed, loggedTurns(rec.turns), context.data, source);
      quizzes.push(await maker.fromEpisode(episode, scenario.initialState, source));
    } catch (err) {
      if (!(err instanceof ReplayMismatch || err instanceof StoryMismatch || err instanceof DataError)) throw err;
      skipped.push({ source, reason: err instanceof DataError ? err.reason : err.message });
    }
  }
  if (itemIds.length) {
    if (!dataFile) throw new QuestionsError(`run ${run.id}: its items do not name their data file`);
    const benchmark = await loadBenchmark(world);
    let items;
    try {
      items = await benchmark.load(dataFile);
    } catch (err) {
      throw new QuestionsError(`run ${run.id} asked questions of ${dataFile}, which cannot be read now: ${(err as Error).message}`);
    }
    const asked = new Set(itemIds);
    const found = items.filter((it) => asked.has(it.id));
    if (found.length < asked.size) throw new QuestionsError(`run ${run.id}: ${asked.size - found.length} of its items are not in ${dataFile} any more (was the file changed?)`);
    quizzes.push(...(await maker.fromItems(benchmark, found)));
  }
  if (quizzes.length === 0 && skipped.length) throw new QuestionsError(`no episode of run ${run.id} can be asked about: ${skipped.map((s) => `${s.source}: ${s.reason}`).join("; ")}`);
  return { world, quizzes, skipped };
}

async function makerOf(world: string): Promise<QuestionMaker> {
  try {
    return await loadQuestionMaker(world);
  } catch (err) {
    const can = (await worldsWith("questions")).map((w) => w.name);
    throw new QuestionsError(`the ${world} world asks no questions about its episodes (worlds that do: ${can.join(", ")}) [${(err as Error).message}]`);
  }
}

function loggedTurns(raw: unknown): LoggedTurn[] {
  if (!Array.isArray(raw)) return [];
  return (raw as { agent?: unknown; timestep?: unknown; action?: unknown }[]).flatMap((t) =>
    typeof t?.agent === "string" && typeof t.timestep === "number" ? [{ agent: t.agent, timestep: t.timestep, action: t.action }] : [],
  );
}

export interface Selection {
  /** Question types to keep (all when absent); each must be one the world asks. */
  readonly types?: readonly string[];
  /** At most this many questions, drawn with `seed` (file order kept). */
  readonly max?: number;
  readonly seed: number;
}

/** The quizzes with only the selected questions (quizzes left with none dropped). */
export function selectQuestions(maker: Pick<QuestionMaker, "types">, quizzes: readonly EpisodeQuiz[], sel: Selection): EpisodeQuiz[] {
  const unknown = (sel.types ?? []).filter((t) => !maker.types.includes(t));
  if (unknown.length) throw new QuestionsError(`--types: ${unknown.join(", ")} ${unknown.length === 1 ? "is not a type" : "are not types"} this world asks (${maker.types.join(", ")})`);
  const types = sel.types && new Set(sel.types);
  let kept = quizzes.map((q) => ({ ...q, questions: types ? q.questions.filter((x) => types.has(x.type)) : q.questions }));
  const total = kept.reduce((n, q) => n + q.questions.length, 0);
  if (sel.max !== undefined && sel.max < total) {
    const chosen = new Set(Rng.seeded(`questions:${sel.seed}`).sample(range(total), sel.max));
    let i = 0;
    kept = kept.map((q) => ({ ...q, questions: q.questions.filter(() => chosen.has(i++)) }));
  }
  return kept.filter((q) => q.questions.length > 0);
}

export interface WrittenQuestions {
  readonly set: GeneratedSet;
  readonly questions: number;
  readonly byType: Readonly<Record<string, number>>;
}

/**
 * Writes the quizzes' questions in the benchmark's format for `out`, read back first (in a
 * folder beside it) with the world's benchmark: a file that does not load, or whose labels the
 * world model does not give, is an error and is not written.
 */
export async function writeQuestions(world: string, quizzes: readonly EpisodeQuiz[], out: string, seed: number): Promise<WrittenQuestions> {
  const maker = await makerOf(world);
  const questions = quizzes.reduce((n, q) => n + q.questions.length, 0);
  if (questions === 0) throw new QuestionsError("no questions to write (the episodes, or the --types asked for, give none)");
  const scratch = mkdtempSync(join(dirname(out), `.${basename(out)}.`));
  try {
    const trial = maker.write(quizzes, join(scratch, basename(out)), seed);
    for (const f of trial.files) writeFileAtomic(f.path, f.text);
    await checkFile(await loadBenchmark(world), trial.data, questions);
    const set = maker.write(quizzes, out, seed);
    trial.files.forEach((f, i) => renameSync(f.path, set.files[i]!.path));
    const byType: Record<string, number> = {};
    for (const q of quizzes) for (const x of q.questions) byType[x.type] = (byType[x.type] ?? 0) + 1;
    return { set, questions, byType };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Reads the file as `bench` does: every question, each label the world model's own. */
async function checkFile(benchmark: Benchmark, file: string, expected: number): Promise<void> {
  const items = await benchmark.load(file);
  if (items.length !== expected) throw new Error(`${file}: wrote ${expected} questions, the ${benchmark.title} reader finds ${items.length}`);
  for (const item of items) {
    const gt = await benchmark.groundTruth(item);
    if (!gt.agrees) throw new Error(`${file}: "${item.question}" is labelled ${JSON.stringify(item.answer)}, but the world model reading the file answers ${JSON.stringify(gt.label ?? null)}`);
  }
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
