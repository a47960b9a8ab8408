/**
 * Decision points from the turns a policy played in a room's episodes (self-play), rewarded by the
 * episode itself, never by what a story's script would have done: a reply that is a valid action
 * there (it parses against the world's action schema and the world's own check accepts it in the
 * state the agent was in) gets 1, plus whatever reward the world gives the agent for that action
 * when its timestep is stepped again with it in place of the played one (the other agents' actions
 * and the narrator's events as they were); an invalid reply gets the trainer's format failure.
 *
 * Under constrained decoding every sampled reply is valid, so in a world without rewards of its own
 * (ToMi) a group's rewards are all equal and it teaches nothing: the quiz points
 * (self-play-points.ts) carry the learning there. Each sampled group is logged as a `room_episode`
 * record of the played episode's socialized context, the replies as the turns taken at that timestep.
 */
import { createHash } from "node:crypto";
import type { z } from "zod";
import { turnMessages } from "../../agents/policy/action.js";
import type { EpisodeLog } from "../../store/episode-log.js";
import { strictFormat } from "../../worlds/core/rewards/strict-format.js";
import type { SocializedContext } from "../../worlds/core/socialized-context.js";
import { LazyRng, TimestepContext } from "../../worlds/core/step-context.js";
import type { AnyWorld } from "../../worlds/core/world.js";
import type { DecisionPoint, Judged, PointSource, ScoredReply } from "./decision-point.js";
import { appendGroup } from "./world-points.js";

/** A turn a policy seat played: the state it acted in, what it observed, and what everyone did then. */
export interface PlayedTurn {
  readonly agent: string;
  readonly timestep: number;
  readonly observation: string;
  /** The world's state before the timestep's actions. */
  readonly state: unknown;
  /** Every agent's applied action at that timestep (a missing agent did nothing). */
  readonly joint: Readonly<Record<string, unknown>>;
  /** What the environment imposed at that timestep. */
  readonly exogenous: readonly unknown[];
}

/** A played episode's turns to learn from, and its record for the log. */
export interface PlayedTurns {
  readonly seed: number;
  readonly title: string;
  /** The episode's socialized context, without minds (what the logged groups show). */
  readonly context: SocializedContext;
  readonly turns: readonly PlayedTurn[];
}

interface TurnPoint extends DecisionPoint {
  readonly episode: PlayedTurns;
  readonly turn: PlayedTurn;
}

/** The reward of a valid action: validity itself (the world's own reward comes on top). */
export const VALID_ACTION_REWARD = 1;

export class TurnPoints implements PointSource {
  readonly description: string;
  readonly dataId: string;
  readonly runParams: Record<string, unknown>;
  private readonly points: TurnPoint[];

  constructor(
    private readonly world: AnyWorld,
    episodes: readonly PlayedTurns[],
    system?: string,
  ) {
    this.points = episodes.flatMap((episode) => episode.turns.map((turn) => turnPoint(world, episode, turn, system)));
    this.description = `${world.name} turns played (${episodes.length} episodes, ${this.points.length} turns: valid actions and the world's rewards)`;
    this.dataId = createHash("sha256")
      .update(JSON.stringify({ world: world.name, turns: this.points.map((p) => p.id), system: system ?? null }))
      .digest("hex")
      .slice(0, 16);
    this.runParams = { world: world.name, episodes: episodes.length, turns: this.points.length };
  }

  get size(): number {
    return this.points.length;
  }

  async point(index: number): Promise<DecisionPoint> {
    return this.points[index]!;
  }

  async logGroup(log: EpisodeLog, runId: string, point: DecisionPoint, replies: readonly ScoredReply[], meta: { step: number; group: number; prompt: string }): Promise<void> {
    const { episode, turn } = point as TurnPoint;
    const at = { title: episode.title, seed: episode.seed, context: episode.context, agent: turn.agent, timestep: turn.timestep, observation: turn.observation, reference: turn.joint[turn.agent] ?? null };
    appendGroup(log, runId, this.world.name, at, (a) => this.world.renderAction(turn.state, turn.agent, a), replies, meta);
  }
}

function turnPoint(world: AnyWorld, episode: PlayedTurns, turn: PlayedTurn, system: string | undefined): TurnPoint {
  const schema = world.actionSchema(turn.state, turn.agent) as z.ZodType<unknown>;
  const render = (a: unknown) => world.renderAction(turn.state, turn.agent, a);
  return {
    id: `turn:${episode.seed}:${turn.agent}:${turn.timestep}`,
    episode,
    turn,
    messages: turnMessages(turn.observation, system),
    schema,
    // Nothing to imitate: no reference text, and the judge below replaces exact match.
    reference: "",
    exact: () => 0,
    answerText: render,
    judge: async (texts) => texts.map((text) => judgeTurn(world, episode.seed, turn, schema, text)),
  };
}

/** A reply at a played turn: valid or not, and the world's reward for it. */
export function judgeTurn(world: AnyWorld, seed: number, turn: PlayedTurn, schema: z.ZodType<unknown>, text: string): Judged {
  const parsed = strictFormat(text, schema);
  if (!parsed.ok) return { format: false, formatError: parsed.error, reward: 0, score: 0 };
  const refused = world.check?.(turn.state, turn.agent, parsed.action);
  if (refused !== undefined) return { format: false, formatError: `the world refuses it: ${refused}`, action: parsed.action, reward: 0, score: 0 };
  return { format: true, action: parsed.action, reward: VALID_ACTION_REWARD + worldReward(world, seed, turn, parsed.action), score: 1 };
}

/** The world's reward for `agent` had it taken `action` at its turn (0 where the world gives none). */
function worldReward(world: AnyWorld, seed: number, turn: PlayedTurn, action: unknown): number {
  const names = world.agents(turn.state);
  const joint = new Map<string, unknown>(names.map((n) => [n, n in turn.joint ? turn.joint[n] : world.noop(turn.state, n)]));
  joint.set(turn.agent, action);
  // The timestep's own random stream is the episode's, already drawn from; a seeded one of its own
  // keeps the reward of a reply the same every time it is asked.
  const result = world.step(turn.state, joint, new TimestepContext(new LazyRng(`selfplay:${seed}:${turn.timestep}`), turn.exogenous));
  return result.rewards?.[turn.agent] ?? 0;
}
