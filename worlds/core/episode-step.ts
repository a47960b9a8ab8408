/**
 * A long episode logged one timestep at a time (`episode_step` records), so a run that stops
 * loses at most the timestep in progress and can be taken up again by replaying what was logged.
 * Read back (trainers/data/run-log.ts), a run's steps are the one episode they make: a socialized
 * context with a timestep per record (and the closing one), and every logged turn.
 *
 *   {"kind": "episode_step", "run", "world", "seed", "title",
 *    "agents_names": the agents whose views are logged (the same in every step),
 *    "timestep": 1, 2, ... (consecutive from 1),
 *    "state": the world before the agents act,
 *    "observations": [one per agent, its text alone], "actions": [likewise],
 *    "turns": [{agent, observation?, prompt?, raw?, action, actionText?, source, error?, info?}],
 *    ...the world's own fields (what it needs to replay the step)}
 *
 * A turn's observation, when left out, is its agent's entry of `observations` (a rule-based
 * agent's turn is its decision alone).
 *
 * A SteppedRun is the world's side of such a run (the economy's `simulate` run): it steps, gives
 * each timestep's record, and replays logged ones; the run's registration and log belong to the
 * session that drives it (benchmarks/simulation-session.ts).
 */
import { z } from "zod";

export const EPISODE_STEP = "episode_step";

export const StepTurnSchema = z.looseObject({
  agent: z.string(),
  observation: z.string().optional(),
  prompt: z.string().optional(),
  raw: z.string().optional(),
  action: z.unknown(),
  actionText: z.string().optional(),
  source: z.string(),
  error: z.string().optional(),
  info: z.record(z.string(), z.unknown()).optional(),
});
export type StepTurn = z.infer<typeof StepTurnSchema>;

export const EpisodeStepRecordSchema = z
  .looseObject({
    kind: z.literal(EPISODE_STEP),
    run: z.string().nullable().optional(),
    world: z.string(),
    seed: z.union([z.string(), z.number()]),
    title: z.string().optional(),
    agents_names: z.array(z.string()),
    timestep: z.number().int().min(1),
    state: z.string(),
    observations: z.array(z.string()),
    actions: z.array(z.string()),
    turns: z.array(StepTurnSchema),
  })
  .superRefine((r, ctx) => {
    const n = r.agents_names.length;
    for (const key of ["observations", "actions"] as const) {
      if (r[key].length !== n) ctx.addIssue({ code: "custom", path: [key], message: `${r[key].length} entries for ${n} agents` });
    }
    const names = new Set(r.agents_names);
    r.turns.forEach((t, i) => {
      if (!names.has(t.agent)) ctx.addIssue({ code: "custom", path: ["turns", i, "agent"], message: `"${t.agent}" is not in agents_names` });
    });
  });
export type EpisodeStepRecord = z.infer<typeof EpisodeStepRecordSchema>;

/** The world's side of a run logged a timestep at a time. */
export interface SteppedRun {
  readonly world: string;
  /** Timesteps done (replayed ones included). */
  readonly done: number;
  /** Timesteps the run has in all. */
  readonly total: number;
  /** Runs the next timestep and returns its record (without `run`, which the session adds). */
  step(): Promise<EpisodeStepRecord>;
  /** Replays a logged timestep (a resumed run); an Error when it is not the record of the next one. */
  replay(record: EpisodeStepRecord): void;
  /** The run so far as its report (report.json, `--json`). */
  report(): Record<string, unknown>;
  /** The few figures the store's run list shows. */
  summary(): Record<string, unknown>;
}
