/**
 * Decision points a world scores itself (worlds/core/scored-decision.ts; `train grpo --world
 * economy`): each is asked as the policy agent is prompted (the observation as the user message,
 * after an optional system message), a reply must be exactly the action's JSON (the trainer's
 * strict format: -1 otherwise, by default), and a well-formed action gets the world's graded
 * reward in [0, 1] as its `exact` part (the economy: the decision's utility over the months that
 * followed, normalized between the worst and the best decision there). The reference, for F1 and
 * ROUGE-L when asked for, is the best action rendered.
 *
 * Each sampled group is logged as a `room_episode` record: the point's socialized context, and
 * the group's replies as the turns taken there, each with its reward.
 */
import { createHash } from "node:crypto";
import { turnMessages } from "../../agents/policy/action.js";
import type { EpisodeLog } from "../../store/episode-log.js";
import type { ScoredDecision } from "../../worlds/core/scored-decision.js";
import type { DecisionSet } from "../../worlds/core/scored-decision.js";
import { loadDecisions } from "../../worlds/registry.js";
import { recDecisionsWithSasrec } from "../rec/decisions.js";
import type { DecisionPoint, PointSource, ScoredReply } from "./decision-point.js";
import { appendGroup } from "./world-points.js";

/**
 * Worlds whose decision points need more than the world layer can build, and the sets built here
 * instead: the recommendation world's policy also weighs SASRec, which trains on the model runtime.
 */
const BUILT_ABOVE: Readonly<Record<string, DecisionSet>> = { rec: recDecisionsWithSasrec };

interface ScoredPoint extends DecisionPoint {
  readonly decision: ScoredDecision;
}

export class ScoredPoints implements PointSource {
  readonly description: string;
  readonly dataId: string;
  readonly runParams: Record<string, unknown>;

  private constructor(
    readonly world: string,
    private readonly points: readonly ScoredPoint[],
    count: number,
    seed: number,
    system: string | undefined,
    describe: string,
  ) {
    this.description = `world ${world} (${points.length} decision points it scores itself from seed ${seed}: ${describe})`;
    this.dataId = createHash("sha256").update(JSON.stringify({ world, scored: count, seed, system: system ?? null })).digest("hex").slice(0, 16);
    this.runParams = { world, points: count, worldSeed: seed };
  }

  /** `count` points of world `name`'s episode seeded `seed` (the world's DecisionSet). */
  static async open(world: string, count: number, seed: number, system?: string): Promise<ScoredPoints> {
    const set = BUILT_ABOVE[world] ?? (await loadDecisions(world));
    const decisions = await set.points(count, seed);
    if (decisions.length === 0) throw new Error(`no decision points from ${world} (seed ${seed})`);
    const points = decisions.map(
      (d): ScoredPoint => ({
        decision: d,
        id: d.id,
        messages: turnMessages(d.observation, system),
        schema: d.schema,
        reference: d.render(d.best),
        exact: (action) => d.reward(action),
        answerText: (action) => d.render(action),
      }),
    );
    return new ScoredPoints(world, points, count, seed, system, set.describe);
  }

  get size(): number {
    return this.points.length;
  }

  async point(index: number): Promise<DecisionPoint> {
    return this.points[index]!;
  }

  async logGroup(log: EpisodeLog, runId: string, point: DecisionPoint, replies: readonly ScoredReply[], meta: { step: number; group: number; prompt: string }): Promise<void> {
    const d = (point as ScoredPoint).decision;
    appendGroup(log, runId, this.world, { ...d, reference: d.best }, d.render, replies, meta);
  }
}
