/**
 * The training dashboard's data: every training run the server knows of (its own self-play rounds,
 * and `train grpo --server` runs elsewhere that post their metrics), with each step's metrics kept
 * for the plots. Every new step goes out on the socket.io progress stream as a `progress` event of
 * kind "trainer" ({runId, kind, title, source, steps, roomIds, metrics}); a run's end as `finished`.
 */
import { z } from "zod";
import type { ProgressHub } from "./progress-hub.js";

/** The most steps kept per run (older ones are dropped from the plots, never from the run's own files). */
const MAX_HISTORY = 5000;
/** The most runs kept (the oldest finished ones go first). */
export const MAX_RUNS = 200;

const finite = z.number().refine(Number.isFinite, "must be a finite number");

/** A step's metrics as a poster sends them (trainers/grpo/metrics.ts); extra fields are dropped. */
export const StepMetricsSchema = z
  .object({
    step: z.number().int().min(1),
    reward: finite,
    rewardStd: finite.optional(),
    accuracy: finite,
    formatRate: finite.optional(),
    f1: finite.optional(),
    rougeL: finite.optional(),
    kl: finite.nullable(),
    entropy: finite,
    clipFraction: finite,
    dualClipFraction: finite.optional(),
    loss: finite,
    policyLoss: finite.optional(),
    responseLength: finite,
    responseLengthMax: finite.optional(),
    truncatedRate: finite.optional(),
    groups: z.number().int().min(0).optional(),
    droppedGroups: z.number().int().min(0).optional(),
    rolloutBatches: z.number().int().min(0).optional(),
    updates: z.number().int().min(0).optional(),
    lr: finite.optional(),
    gradNorm: finite.optional(),
    seconds: finite.optional(),
    rolloutSeconds: finite.optional(),
    tokensPerSecond: finite.optional(),
    tooLong: z.number().int().min(0).optional(),
    leakRate: finite.optional(),
  })
  .strip();
/** One step's metrics of a training run (trainers/grpo/metrics.ts), as the board keeps and serves them. */
export type TrainingMetrics = z.infer<typeof StepMetricsSchema>;

const Id = z.string().min(1).max(200);

/** What `POST /api/training/events` takes. */
export const TrainingPostSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("progress"),
    event: z.object({ runId: Id, title: z.string().max(300), source: z.string().max(500).default(""), steps: z.number().int().min(1), metrics: StepMetricsSchema }).strip(),
  }),
  z.object({ type: z.literal("finished"), event: z.object({ runId: Id, status: z.enum(["done", "interrupted", "failed"]) }).strip() }),
]);

/**
 * Self-play: how the pool's policy of each round answered the quiz questions of episodes it played
 * (new episodes: a round trains on earlier ones only). Round 0 is the starting policy.
 */
const QuizAccuracyPointSchema = z.object({
  round: z.number().int().min(0),
  episodes: z.number().int().min(0),
  questions: z.number().int().min(0),
  correct: z.number().int().min(0),
  accuracy: finite,
});
export type QuizAccuracyPoint = Readonly<z.infer<typeof QuizAccuracyPointSchema>>;
const QuizSeriesSchema = z.array(QuizAccuracyPointSchema).max(100_000);

/**
 * Self-play with held-out episodes (the pool's `heldOutEpisodes`): each round's policy on the
 * same fixed questions, those of episodes no round trained on, with the 95% Wilson interval of
 * its accuracy (benchmarks/wilson-interval.ts). Round 0 is the starting policy.
 */
const HeldOutPointSchema = z.object({
  round: z.number().int().min(0),
  questions: z.number().int().min(0),
  correct: z.number().int().min(0),
  accuracy: finite,
  low: finite,
  high: finite,
  /** Names the question set (a hash of its question ids): the same for every point of a pool. */
  questionSet: z.string().max(64),
});
export type HeldOutPoint = Readonly<z.infer<typeof HeldOutPointSchema>>;
const HeldOutSeriesSchema = z.array(HeldOutPointSchema).max(100_000);

/**
 * A self-play run's curves (the pool's, round by round), by field: the news the processes of a
 * group tell each other when one grows, the stream's event, and the series' schema.
 */
const CURVES = {
  quizAccuracy: { news: "training-quiz", event: "quiz_accuracy", schema: QuizSeriesSchema },
  heldOutAccuracy: { news: "training-held-out", event: "held_out_accuracy", schema: HeldOutSeriesSchema },
} as const;
type Curve = keyof typeof CURVES;
type CurveOf<K extends Curve> = readonly z.infer<(typeof CURVES)[K]["schema"]>[number][];

/** What a step says of its run (also as the processes of a group pass it on: server-side, checked on arrival). */
const StepInfoSchema = z.object({
  runId: Id,
  title: z.string().max(300),
  source: z.string().max(500),
  steps: z.number().int().min(1),
  roomIds: z.array(z.string()).max(10_000).optional(),
  /** Rooms only the admin is told of. */
  privateRoomIds: z.array(z.string()).max(10_000).optional(),
  round: z.number().int().min(0).optional(),
  quizAccuracy: QuizSeriesSchema.optional(),
  heldOutAccuracy: HeldOutSeriesSchema.optional(),
});
/** What the board is told of a run with its steps (self-play rounds: their round and rooms). */
export type RunInfo = z.input<typeof StepInfoSchema>;

const FinishSchema = z.object({
  runId: Id,
  status: z.enum(["done", "interrupted", "failed"]),
  extra: z.object({ checkpoint: z.string().optional(), error: z.string().max(2000).optional() }).strip(),
});

/** A training run on the dashboard, as `GET /api/training` lists it and the board keeps it. */
export interface TrainingRun {
  readonly runId: string;
  title: string;
  source: string;
  steps: number;
  status: "running" | "done" | "interrupted" | "failed";
  /** Rooms whose policy the run trains (self-play): the public ones (the admin's view: all of them). */
  roomIds: string[];
  /** Self-play: the round, and the checkpoint the rooms now play. */
  round?: number;
  checkpoint?: string;
  /** A failed run: why. */
  error?: string;
  /** Self-play: the pool's quiz accuracy on new episodes, round by round (the run's own round's so far). */
  quizAccuracy?: QuizAccuracyPoint[];
  /** Self-play with held-out episodes: the pool's accuracy on the same held-out questions, round by round. */
  heldOutAccuracy?: HeldOutPoint[];
  readonly startedAt: string;
  updatedAt: string;
  history: TrainingMetrics[];
}

/** A run as the processes of a group pass it between them: with its private rooms, which only a view for the admin shows. */
type SharedRun = TrainingRun & { readonly privateRoomIds?: readonly string[] };

/** Who reads the board: the admin token's holder, or anyone. */
export interface Viewer {
  readonly admin: boolean;
}
const PUBLIC: Viewer = { admin: false };

/** A run as `viewer` may see it: only the admin is shown private rooms' ids, their checkpoints and errors (which name folders named for the pool). */
function viewOf(run: SharedRun, viewer: Viewer): TrainingRun {
  const { privateRoomIds, ...own } = run;
  if (viewer.admin || !privateRoomIds?.length) return { ...own, roomIds: [...own.roomIds, ...(privateRoomIds ?? [])] };
  const { checkpoint: _checkpoint, error: _error, ...shown } = own;
  return shown;
}

export class TrainingBoard {
  private readonly runs = new Map<string, TrainingRun>();
  /** Self-play rounds' private rooms, kept off the runs themselves so that no public view can carry them. */
  private readonly privateRooms = new Map<string, ReadonlySet<string>>();

  constructor(private readonly hub: ProgressHub) {
    // In a group, each process's board follows the runs of all: a step, a quiz or an end posted to
    // one process is applied by every other (its clients already got the event through the adapter).
    hub.answer("training", () => this.shared());
    hub.hear("training-step", (info, metrics) => {
      const i = StepInfoSchema.safeParse(info);
      const m = StepMetricsSchema.safeParse(metrics);
      if (i.success && m.success) this.apply(i.data, m.data);
    });
    for (const field of Object.keys(CURVES) as Curve[]) {
      hub.hear(CURVES[field].news, (runId, series) => {
        const id = Id.safeParse(runId);
        const q = CURVES[field].schema.safeParse(series);
        if (id.success && q.success) this.setCurve(id.data, field, q.data as CurveOf<typeof field>);
      });
    }
    hub.hear("training-finish", (runId, status, extra) => {
      const f = FinishSchema.safeParse({ runId, status, extra });
      if (f.success) this.close(f.data.runId, f.data.status, f.data.extra);
    });
  }

  /** This process's runs, as `viewer` may see them. */
  list(viewer: Viewer = PUBLIC): TrainingRun[] {
    return this.shared()
      .sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1))
      .map((r) => viewOf(r, viewer));
  }

  /**
   * The runs of every process of the group (this process's alone without one), as `viewer` may
   * see them: each process knows the runs it trains and those posted to it, and, from the store,
   * every earlier run, which a process started during another's run shows as interrupted: the
   * copy updated last wins.
   */
  async listAll(viewer: Viewer = PUBLIC): Promise<TrainingRun[]> {
    const byId = new Map<string, SharedRun>();
    for (const list of [this.shared(), ...(await this.hub.askOthers<SharedRun[]>("training"))]) {
      for (const run of list) {
        const seen = byId.get(run.runId);
        if (!seen || seen.updatedAt < run.updatedAt) byId.set(run.runId, run);
      }
    }
    return [...byId.values()]
      .sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1))
      .slice(0, MAX_RUNS)
      .map((r) => viewOf(r, viewer));
  }

  get(runId: string, viewer: Viewer = PUBLIC): TrainingRun | undefined {
    return this.list(viewer).find((r) => r.runId === runId);
  }

  private shared(): SharedRun[] {
    return [...this.runs.values()].map((r) => {
      const hidden = this.privateRooms.get(r.runId);
      return hidden?.size ? { ...r, privateRoomIds: [...hidden] } : r;
    });
  }

  /** A step of a run (registering the run on its first step). `privateRoomIds`: rooms only the admin is told of. */
  step(info: RunInfo, metrics: TrainingMetrics): void {
    const run = this.apply(info, metrics);
    this.hub.tell("training-step", info, metrics);
    this.hub.publish("progress", {
      runId: run.runId,
      kind: "trainer",
      title: run.title,
      source: run.source,
      steps: run.steps,
      // The stream goes to everyone: the public view.
      roomIds: run.roomIds,
      ...(run.round !== undefined ? { round: run.round } : {}),
      ...(run.quizAccuracy ? { quizAccuracy: run.quizAccuracy } : {}),
      ...(run.heldOutAccuracy ? { heldOutAccuracy: run.heldOutAccuracy } : {}),
      metrics,
    });
  }

  private apply(info: RunInfo, metrics: TrainingMetrics): TrainingRun {
    const run = this.register(info);
    // A resumed run sends its steps again: the newer record replaces the older.
    const i = run.history.findIndex((m) => m.step >= metrics.step);
    if (i >= 0) run.history.splice(i);
    run.history.push(metrics);
    if (run.history.length > MAX_HISTORY) run.history.splice(0, run.history.length - MAX_HISTORY);
    return run;
  }

  /**
   * A run that failed, and why: registered here when it failed before its first step (a
   * self-play round whose episodes gave nothing to learn from, a round's thread that died).
   */
  fail(info: RunInfo, error: string): void {
    this.register(info).error = error;
    this.finish(info.runId, "failed", { error });
  }

  /** The run `info` names, registered or brought up to date (running). */
  private register(info: RunInfo): TrainingRun {
    const now = new Date().toISOString();
    let run = this.runs.get(info.runId);
    if (!run) {
      run = { runId: info.runId, title: info.title, source: info.source, steps: info.steps, status: "running", roomIds: [...(info.roomIds ?? [])], startedAt: now, updatedAt: now, history: [] };
      this.runs.set(info.runId, run);
      this.trim();
    }
    run.title = info.title;
    run.source = info.source;
    run.steps = info.steps;
    run.status = "running";
    run.updatedAt = now;
    if (info.roomIds) run.roomIds = [...info.roomIds];
    if (info.privateRoomIds) this.privateRooms.set(run.runId, new Set(info.privateRoomIds));
    if (info.round !== undefined) run.round = info.round;
    if (info.quizAccuracy) run.quizAccuracy = [...info.quizAccuracy];
    if (info.heldOutAccuracy) run.heldOutAccuracy = [...info.heldOutAccuracy];
    return run;
  }

  /** Self-play: the pool's quiz accuracy, round by round, now that another quiz was answered (on its latest round's run). */
  quizAccuracy(runId: string, series: readonly QuizAccuracyPoint[]): void {
    this.curve(runId, "quizAccuracy", series);
  }

  /** Self-play: the pool's accuracy on its held-out questions, round by round, now that a round's policy was scored (on its latest round's run). */
  heldOutAccuracy(runId: string, series: readonly HeldOutPoint[]): void {
    this.curve(runId, "heldOutAccuracy", series);
  }

  private curve<K extends Curve>(runId: string, field: K, series: CurveOf<K>): void {
    const run = this.setCurve(runId, field, series);
    if (!run) return;
    this.hub.tell(CURVES[field].news, runId, series);
    this.hub.publish(CURVES[field].event, { runId, kind: "trainer", [field]: run[field] });
  }

  private setCurve<K extends Curve>(runId: string, field: K, series: CurveOf<K>): TrainingRun | undefined {
    const run = this.runs.get(runId);
    if (!run) return undefined;
    (run[field] as CurveOf<K>) = [...series];
    run.updatedAt = new Date().toISOString();
    return run;
  }

  /** A run from before this server started (history.ts), shown as it was; nothing is published. */
  restore(run: TrainingRun): void {
    if (this.runs.has(run.runId)) return;
    this.runs.set(run.runId, { ...run, history: run.history.slice(-MAX_HISTORY) });
    this.trim();
  }

  finish(runId: string, status: "done" | "interrupted" | "failed", extra: { checkpoint?: string; error?: string } = {}): void {
    const run = this.close(runId, status, extra);
    this.hub.tell("training-finish", runId, status, extra);
    const shown = this.privateRooms.get(runId)?.size ? {} : extra;
    this.hub.publish("finished", { runId, kind: "trainer", status, ...(run ? { title: run.title } : {}), ...shown });
  }

  private close(runId: string, status: "done" | "interrupted" | "failed", extra: { checkpoint?: string; error?: string }): TrainingRun | undefined {
    const run = this.runs.get(runId);
    if (run) {
      run.status = status;
      run.updatedAt = new Date().toISOString();
      if (extra.checkpoint) run.checkpoint = extra.checkpoint;
      if (extra.error) run.error = extra.error;
    }
    return run;
  }

  private trim(): void {
    if (this.runs.size <= MAX_RUNS) return;
    for (const run of [...this.runs.values()].sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : 1))) {
      if (this.runs.size <= MAX_RUNS) break;
      if (run.status !== "running") {
        this.runs.delete(run.runId);
        this.privateRooms.delete(run.runId);
      }
    }
  }
}
