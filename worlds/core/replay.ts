/**
 * Replays a recorded episode: the same world, initial state and seed, the recorded actions (an
 * agent with no recorded turn did nothing) and the recorded exogenous events, folded through the
 * world again. Worlds are pure, so the replay must reproduce every timestep; `replayEpisode`
 * says where it does not.
 */
import type { Episode, TimestepRecord } from "./episode.js";
import { Rng } from "./rng.js";
import type { World } from "./world.js";

export interface ReplayResult<S> {
  readonly finalState: S;
  /** The first timestep whose state, actions or events differ from the record, if any. */
  readonly divergence?: { readonly timestep: number; readonly field: string; readonly recorded: unknown; readonly replayed: unknown };
}

export function replayEpisode<S, A, X>(world: World<S, A, X>, initialState: S, episode: Episode): ReplayResult<S> {
  const rng = Rng.seeded(episode.seed);
  let state = initialState;
  const agents = world.agents(state);
  const byStep = new Map<number, Map<string, A>>();
  for (const t of episode.turns) {
    let m = byStep.get(t.timestep);
    if (!m) byStep.set(t.timestep, (m = new Map()));
    m.set(t.agent, t.action as A);
  }
  const ctx = (rec: TimestepRecord) => ({ rng, exogenous: (rec.exogenous ?? []) as readonly X[] });
  for (const rec of episode.steps) {
    const describe = world.describe(state);
    if (describe !== rec.state) return diverged(state, rec.timestep, "state", rec.state, describe);
    if (rec === episode.steps[episode.steps.length - 1]) break;
    const joint = new Map<string, A>();
    for (const name of agents) joint.set(name, byStep.get(rec.timestep)?.get(name) ?? world.noop(state, name));
    for (const name of agents) {
      const a = joint.get(name)!;
      const text = world.isNoop(a) ? "none" : world.renderAction(state, name, a);
      if (text !== rec.actions[name]) return diverged(state, rec.timestep, `actions.${name}`, rec.actions[name], text);
    }
    const result = world.step(state, joint, ctx(rec));
    const events = result.events.map((e) => e.text);
    const recorded = rec.events.map((e) => e.text);
    if (events.join("\n") !== recorded.join("\n")) return diverged(state, rec.timestep, "events", recorded, events);
    state = result.state;
  }
  return { finalState: state };
}

function diverged<S>(finalState: S, timestep: number, field: string, recorded: unknown, replayed: unknown): ReplayResult<S> {
  return { finalState, divergence: { timestep, field, recorded, replayed } };
}
