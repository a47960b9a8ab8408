/**
 * A run's episode log as the exporters read it: every line checked against the record layout of
 * its kind (the fields the writers put there: benchmarks/runner.ts, cli/commands/demo.ts,
 * server/rooms/simulation-room.ts, cli/commands/simulate.ts), contexts written once per story filled
 * in on every line, and lines of kinds an exporter does not know counted, not guessed at.
 *
 * A run logged a timestep at a time (`episode_step` records, worlds/core/episode-step.ts) is read
 * as the episodes its steps make: each run of steps from timestep 1 is one room episode, its
 * socialized context a timestep per record (and the closing one where every action is none), its
 * turns every logged turn.
 */
import { z } from "zod";
import { DataError } from "../../worlds/core/errors.js";
import { EPISODE_STEP, EpisodeStepRecordSchema, StepTurnSchema, type EpisodeStepRecord } from "../../worlds/core/episode-step.js";
import { agentLine, NONE, SocializedContextSchema } from "../../worlds/core/socialized-context.js";
import { readEpisodeLog, resolveContexts } from "../../store/episode-log.js";
import type { RunRecord, RunStore } from "../../store/run-store.js";

const Label = z.union([z.string(), z.array(z.string())]);

/** A logged turn: a step's turn (worlds/core/episode-step.ts) with its observation and timestep. */
const Turn = StepTurnSchema.extend({ timestep: z.number().optional(), observation: z.string() });
export type LoggedTurn = z.infer<typeof Turn>;

export const BenchmarkItemRecordSchema = z.looseObject({
  kind: z.literal("benchmark_item"),
  run: z.string().nullable().optional(),
  benchmark: z.string(),
  agent: z.string(),
  mode: z.enum(["vanilla", "simulation"]),
  result: z.looseObject({
    id: z.string(),
    index: z.number().int(),
    type: z.string(),
    file: z.string(),
    line: z.number().int().optional(),
    field: z.string().optional(),
    question: z.string(),
    official: Label,
    answer: z.string(),
    correct: z.boolean(),
    worldModel: Label.nullable(),
    agrees: z.boolean(),
    cause: z.string().optional(),
    error: z.string().optional(),
  }),
  context_id: z.string(),
  socialized_context: SocializedContextSchema.optional(),
  turns: z.array(Turn),
});
export type BenchmarkItemRecord = z.infer<typeof BenchmarkItemRecordSchema>;

export const DemoStoryRecordSchema = z.looseObject({
  kind: z.literal("demo_story"),
  run: z.string().nullable().optional(),
  story: z.array(z.string()),
  storyType: z.string().optional(),
  socialized_context: SocializedContextSchema,
  answers: z.array(z.looseObject({ question: z.string(), type: z.string().optional(), label: z.string(), answer: z.string(), correct: z.boolean() })),
});
export type DemoStoryRecord = z.infer<typeof DemoStoryRecordSchema>;

export const RoomEpisodeRecordSchema = z.looseObject({
  kind: z.literal("room_episode"),
  run: z.string().nullable().optional(),
  world: z.string(),
  title: z.string().optional(),
  seed: z.union([z.string(), z.number()]).optional(),
  socialized_context: SocializedContextSchema,
  turns: z.array(Turn),
});
export type RoomEpisodeRecord = z.infer<typeof RoomEpisodeRecordSchema>;

export const ImportedContextRecordSchema = z.looseObject({
  kind: z.literal("imported_context"),
  run: z.string().nullable().optional(),
  source: z.string(),
  socialized_context: SocializedContextSchema,
});
export type ImportedContextRecord = z.infer<typeof ImportedContextRecordSchema>;

const SCHEMAS = {
  benchmark_item: BenchmarkItemRecordSchema,
  demo_story: DemoStoryRecordSchema,
  room_episode: RoomEpisodeRecordSchema,
  imported_context: ImportedContextRecordSchema,
  [EPISODE_STEP]: EpisodeStepRecordSchema,
} as const;

export type KnownRecord = BenchmarkItemRecord | DemoStoryRecord | RoomEpisodeRecord | ImportedContextRecord;

export interface LoggedRecord {
  /** 1-based line of the log. */
  readonly line: number;
  readonly record: KnownRecord;
}

export interface RunLog {
  readonly path: string;
  readonly records: readonly LoggedRecord[];
  /** Lines of kinds no exporter knows, by kind. */
  readonly unknownKinds: Readonly<Record<string, number>>;
  /** The last line was cut off mid-write (a crash) and is left out. */
  readonly torn: boolean;
}

export function readRunLog(store: RunStore, run: RunRecord): RunLog {
  const path = store.episodesPath(run);
  const read = readEpisodeLog<Record<string, unknown>>(path);
  if (read.total === 0 && !read.torn) throw new DataError(path, {}, `run ${run.id} has no logged episodes`);
  const resolved = resolveContexts(read.records as { context_id?: string; socialized_context?: unknown }[]);
  const records: LoggedRecord[] = [];
  const unknownKinds: Record<string, number> = {};
  const steps = new StepEpisodes(path, records);
  resolved.forEach((raw, i) => {
    const line = i + 1;
    const kind = (raw as { kind?: unknown }).kind;
    const schema = typeof kind === "string" ? SCHEMAS[kind as keyof typeof SCHEMAS] : undefined;
    if (!schema) {
      const k = typeof kind === "string" ? kind : "(no kind)";
      unknownKinds[k] = (unknownKinds[k] ?? 0) + 1;
      return;
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DataError(path, { line }, `${kind} record: ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
    }
    if (kind === EPISODE_STEP) steps.add(line, parsed.data as EpisodeStepRecord);
    else records.push({ line, record: parsed.data as KnownRecord });
  });
  steps.end();
  return { path, records, unknownKinds, torn: read.torn };
}

/** Gathers `episode_step` records into the room episodes they make, pushed to `records` as each ends. */
class StepEpisodes {
  private first: { line: number; record: EpisodeStepRecord } | undefined;
  private steps: RoomEpisodeRecord["socialized_context"]["socialized_context"] = [];
  private turns: LoggedTurn[] = [];
  private last: EpisodeStepRecord | undefined;

  constructor(
    private readonly path: string,
    private readonly records: LoggedRecord[],
  ) {}

  add(line: number, r: EpisodeStepRecord): void {
    if (r.timestep === 1) this.end();
    const f = this.first?.record;
    if (!f) {
      if (r.timestep !== 1) throw new DataError(this.path, { line }, `episode_step record: timestep ${r.timestep} with no timestep 1 before it`);
      this.first = { line, record: r };
    } else if (r.timestep !== this.last!.timestep + 1) {
      throw new DataError(this.path, { line }, `episode_step record: timestep ${r.timestep} follows timestep ${this.last!.timestep}`);
    } else if (r.world !== f.world || r.seed !== f.seed || JSON.stringify(r.agents_names) !== JSON.stringify(f.agents_names)) {
      throw new DataError(this.path, { line }, "episode_step record: another episode's step (its world, seed or agents differ from its timestep 1's)");
    }
    const names = r.agents_names;
    this.steps.push({
      timestep: String(r.timestep),
      state: r.state,
      observations: r.observations.map((o, i) => agentLine(names[i]!, o)),
      actions: r.actions.map((a, i) => agentLine(names[i]!, a)),
    });
    for (const t of r.turns) this.turns.push({ ...t, timestep: r.timestep, observation: t.observation ?? r.observations[names.indexOf(t.agent)]! });
    this.last = r;
  }

  /** Closes the episode in progress, if any. */
  end(): void {
    const first = this.first;
    const last = this.last;
    if (!first || !last) return;
    const names = first.record.agents_names;
    this.steps.push({ timestep: String(last.timestep + 1), state: NONE, observations: names.map((n) => agentLine(n, NONE)), actions: names.map((n) => agentLine(n, NONE)) });
    const record: RoomEpisodeRecord = {
      kind: "room_episode",
      run: first.record.run ?? null,
      world: first.record.world,
      ...(first.record.title !== undefined ? { title: `${first.record.title}, timesteps 1-${last.timestep}` } : {}),
      seed: first.record.seed,
      socialized_context: { agents_names: names, socialized_context: this.steps },
      turns: this.turns,
    };
    this.records.push({ line: first.line, record });
    this.first = undefined;
    this.last = undefined;
    this.steps = [];
    this.turns = [];
  }
}
