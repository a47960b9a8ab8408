/**
 * A run's episode log as the exporters read it: every line checked against the record layout of
 * its kind (the fields the writers put there: benchmarks/runner.ts, cli/commands/demo.ts,
 * server/rooms/simulation-room.ts), contexts written once per story filled in on every line, and
 * lines of kinds an exporter does not know counted, not guessed at.
 */
import { z } from "zod";
import { DataError } from "../../worlds/core/errors.js";
import { SocializedContextSchema } from "../../worlds/core/socialized-context.js";
import { readEpisodeLog, resolveContexts } from "../../store/episode-log.js";
import type { RunRecord, RunStore } from "../../store/run-store.js";

const Label = z.union([z.string(), z.array(z.string())]);

const Turn = z.looseObject({
  agent: z.string(),
  timestep: z.number().optional(),
  observation: z.string(),
  prompt: z.string().optional(),
  raw: z.string().optional(),
  action: z.unknown(),
  actionText: z.string().optional(),
  source: z.string(),
  error: z.string().optional(),
  info: z.record(z.string(), z.unknown()).optional(),
});
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
    records.push({ line, record: parsed.data as KnownRecord });
  });
  return { path, records, unknownKinds, torn: read.torn };
}
