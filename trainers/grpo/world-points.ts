/**
 * Decision points from a world: every turn of every agent in episodes of the world's scenarios
 * (worlds/<world>/scenario.ts, the same stories the rooms play). The policy sees what the agent
 * observed (as the `policy:DIR` agent is prompted: the observation as the user message, after an
 * optional system message); the reply must parse against the world's action schema; the
 * reference is what the story's script did there (exact match of the action, F1 and ROUGE-L of the
 * rendered action). Points come from scripted replays (`train grpo --world W`), or from given turns
 * of a scenario's episodes with the observations their agents had. Imitation of a script: the
 * server's self-play learns from its episodes' own outcomes instead (self-play-points.ts).
 *
 * Each sampled group is logged as a `room_episode` record: the scripted episode's socialized
 * context, and the group's replies as the turns taken at that timestep.
 */
import { createHash } from "node:crypto";
import type { z } from "zod";
import type { Agent } from "../../worlds/core/agent.js";
import { turnMessages } from "../../agents/policy/action.js";
import type { AgentTurn } from "../../worlds/core/agent.js";
import { loadScenario, loadWorld } from "../../worlds/registry.js";
import type { EpisodeLog } from "../../store/episode-log.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { sameAction } from "../../worlds/core/rewards/exact-match.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import type { SocializedContext } from "../../worlds/core/socialized-context.js";
import type { AnyWorld } from "../../worlds/core/world.js";
import { LeakAuditor, type FactSource } from "../../worlds/core/leak-audit.js";
import type { DecisionPoint, PointSource, ScoredReply } from "./decision-point.js";
import { grpoInfo } from "./bench-points.js";

/** A turn to learn from: who, when, and what it observed (when it differs from the script's replay). */
export interface TurnSpec {
  readonly agent: string;
  readonly timestep: number;
  /** The observation the agent had; absent: the scripted replay's. */
  readonly observation?: string;
}

/** An episode to take decision points from: a scenario seed, and optionally which turns. */
export interface EpisodeSpec {
  readonly seed: number;
  /** Only these turns (a room's policy agents); absent: every agent's turn of the scripted replay. */
  readonly turns?: readonly TurnSpec[];
}

interface WorldPoint extends DecisionPoint {
  readonly seed: number;
  readonly agent: string;
  readonly timestep: number;
  readonly observation: string;
  readonly referenceAction: unknown;
  readonly context: SocializedContext;
  readonly title: string;
}

export class WorldPoints implements PointSource {
  readonly description: string;
  readonly dataId: string;
  readonly runParams: Record<string, unknown>;
  private readonly points: WorldPoint[];

  private constructor(
    readonly world: string,
    points: WorldPoint[],
    specs: readonly EpisodeSpec[],
    system: string | undefined,
  ) {
    this.points = points;
    this.description = `world ${world} (${specs.length} episodes, ${points.length} decision points)`;
    this.dataId = createHash("sha256").update(JSON.stringify({ world, specs, system: system ?? null })).digest("hex").slice(0, 16);
    this.runParams = { world, episodes: specs.length, seeds: [...new Set(specs.map((s) => s.seed))].slice(0, 1000) };
  }

  get size(): number {
    return this.points.length;
  }

  /** Scripted replays of the scenarios with seeds `seed`, `seed + 1`, ... (`episodes` of them). */
  static scripted(world: string, episodes: number, seed: number, system?: string): Promise<WorldPoints> {
    return WorldPoints.fromEpisodes(
      world,
      Array.from({ length: episodes }, (_, i) => ({ seed: (seed + i) >>> 0 })),
      system,
    );
  }

  static async fromEpisodes(world: string, specs: readonly EpisodeSpec[], system?: string): Promise<WorldPoints> {
    const factory = await loadScenario(world);
    const source = (await loadWorld(world)).facts;
    const points: WorldPoint[] = [];
    for (const spec of specs) {
      const scenario = await factory.create(spec.seed);
      const w = scenario.world as AnyWorld;
      // The scripted replay: the state before each timestep, and what every agent observed.
      const states: unknown[] = [scenario.initialState];
      const episode = await runEpisode(w, {
        seed: spec.seed,
        initialState: scenario.initialState,
        agents: scenario.scripted as Record<string, Agent<unknown>>,
        ...(scenario.director ? { director: scenario.director } : {}),
        ...(scenario.maxSteps !== undefined ? { maxSteps: scenario.maxSteps } : {}),
        onTimestep: (_rec, next) => {
          states.push(next);
        },
      });
      const context = toSocializedContext(episode, { mentalStates: false });
      const facts = source?.forEpisode(context, scenario.initialState);
      const last = episode.steps.length;
      const wanted: readonly TurnSpec[] = spec.turns ?? episode.steps.slice(0, last - 1).flatMap((rec) => episode.agents.map((agent) => ({ agent, timestep: rec.timestep })));
      for (const t of wanted) {
        const rec = episode.steps[t.timestep - 1];
        const scripted = scenario.scripted[t.agent];
        if (!rec || t.timestep >= last || !scripted) continue;
        const state = states[t.timestep - 1];
        const observation = t.observation ?? rec.observations[t.agent]?.text ?? "";
        const schema = w.actionSchema(state, t.agent) as z.ZodType<unknown>;
        const turn = { world: w.name, agent: t.agent, timestep: t.timestep, observation: { text: observation } } as AgentTurn;
        const referenceAction = (await scripted.act({ ...turn, actionSchema: schema } as AgentTurn<unknown>)).action;
        const render = (a: unknown) => w.renderAction(state, t.agent, a);
        points.push({
          id: `${world}:${spec.seed}:${t.agent}:${t.timestep}`,
          seed: spec.seed,
          agent: t.agent,
          timestep: t.timestep,
          observation,
          referenceAction,
          context,
          title: scenario.title,
          messages: turnMessages(turn.observation.text, system),
          schema,
          reference: render(referenceAction),
          exact: (a) => (sameAction(a, referenceAction) ? 1 : 0),
          answerText: render,
          ...(facts ? { leaks: leakCounter(context, facts, t.agent, t.timestep) } : {}),
        });
      }
    }
    if (points.length === 0) throw new Error(`no decision points in ${specs.length} episode(s) of ${world}`);
    return new WorldPoints(world, points, specs, system);
  }

  async point(index: number): Promise<DecisionPoint> {
    return this.points[index]!;
  }

  async logGroup(log: EpisodeLog, runId: string, point: DecisionPoint, replies: readonly ScoredReply[], meta: { step: number; group: number; prompt: string }): Promise<void> {
    const p = point as WorldPoint;
    appendGroup(log, runId, this.world, { ...p, reference: p.referenceAction }, p.answerText, replies, meta);
  }
}

/** Where a group of replies was sampled: an agent's turn in an episode. */
export interface GroupTurn {
  readonly title: string;
  readonly seed: number;
  readonly context: SocializedContext;
  readonly agent: string;
  readonly timestep: number;
  readonly observation: string;
  /** The action the replies are measured against (the script's, the best). */
  readonly reference: unknown;
}

/** A sampled group as a `room_episode` record: the episode's socialized context, the replies as the turns taken at `at`. */
export function appendGroup(
  log: EpisodeLog,
  runId: string,
  world: string,
  at: GroupTurn,
  render: (action: unknown) => string,
  replies: readonly ScoredReply[],
  meta: { step: number; group: number; prompt: string },
): void {
  log.append({
    kind: "room_episode",
    run: runId,
    room: null,
    world,
    title: at.title,
    seed: at.seed,
    episode: meta.group,
    end: "terminal",
    seats: {},
    socialized_context: at.context,
    turns: replies.map((r, sample) => ({
      agent: at.agent,
      timestep: at.timestep,
      observation: at.observation,
      prompt: meta.prompt,
      raw: r.text,
      action: r.format ? r.action : null,
      actionText: r.format ? render(r.action) : "none",
      reference: at.reference,
      reward: r.reward,
      source: r.format ? "agent" : "fallback",
      ...(r.format ? {} : { error: `invalid action: ${r.formatError}` }),
      latencyMs: 0,
      info: grpoInfo(r, meta.step, meta.group, sample),
    })),
  });
}

/**
 * The leak audit of a reply at one decision point: the facts its action and its text state that
 * the agent never perceived up to this timestep (worlds/core/leak-audit.ts). The auditor is built
 * on first use: only runs with a leak penalty pay for it.
 */
function leakCounter(
  context: SocializedContext,
  facts: ReturnType<FactSource["forEpisode"]>,
  agent: string,
  timestep: number,
): (action: unknown, text: string) => number {
  let auditor: LeakAuditor | undefined;
  return (action, text) => {
    auditor ??= LeakAuditor.at(context, facts.vocabulary, facts.initialTruths, timestep);
    return auditor.check({ agent, action, raw: text }).length;
  };
}
