/**
 * A logged episode (its socialized context) read for replay: per timestep, the world's state and,
 * for each agent, what it perceived (`<same_as_state />` resolved), its mental state then (the
 * context writes one only when it changes: the last one holds), and its action. The leak audit's
 * findings are attached to the actions they were found in.
 */
import type { EpisodeAudit, Leak, SocializedContext } from "./api.js";

export interface AgentStep {
  /** What the agent perceived ("" when nothing). */
  readonly perceived: string;
  /** It perceived the whole state. */
  readonly sameAsState: boolean;
  /** Its mental state at this timestep ("" when it has none yet). */
  readonly mind: string;
  /** The mental state changed at this timestep. */
  readonly mindChanged: boolean;
  readonly action: string;
  readonly leaks: readonly Leak[];
}

export interface ReplayStep {
  readonly timestep: number;
  /** The world's state ("" when nothing has happened yet). */
  readonly state: string;
  readonly agents: ReadonlyMap<string, AgentStep>;
  readonly leaks: readonly Leak[];
}

export interface Replay {
  readonly agents: readonly string[];
  readonly steps: readonly ReplayStep[];
}

const SAME = "<same_as_state />";
const MENTAL = /<mental_state>([\s\S]*?)<\/mental_state>/g;

function split(line: string): [string, string] {
  const i = line.indexOf(":");
  return i < 0 ? ["", line.trim()] : [line.slice(0, i).trim(), line.slice(i + 1).trim()];
}

export function buildReplay(ctx: SocializedContext, audit?: EpisodeAudit): Replay {
  const agents = ctx.agents_names;
  const mind = new Map<string, string>();
  const leaksAt = new Map<string, Leak[]>();
  for (const l of audit?.leaks ?? []) {
    const key = `${l.timestep}:${l.agent}`;
    let list = leaksAt.get(key);
    if (!list) leaksAt.set(key, (list = []));
    list.push(l);
  }
  const steps = ctx.socialized_context.map((step, i): ReplayStep => {
    const timestep = Number.parseInt(step.timestep, 10) || i + 1;
    const state = step.state === "none" ? "" : step.state;
    const obs = new Map(step.observations.map((o) => split(o)));
    const acts = new Map(step.actions.map((a) => split(a)));
    const perAgent = new Map<string, AgentStep>();
    const all: Leak[] = [];
    for (const a of agents) {
      const raw = obs.get(a) ?? "none";
      const minds = [...raw.matchAll(MENTAL)].map((m) => m[1]!.trim());
      const changed = minds.length > 0;
      if (changed) mind.set(a, minds.at(-1)!);
      let text = raw.replace(MENTAL, "").trim();
      const sameAsState = text.includes(SAME);
      text = text.split(SAME).join(state).trim();
      if (text === "none") text = "";
      const leaks = leaksAt.get(`${timestep}:${a}`) ?? [];
      all.push(...leaks);
      perAgent.set(a, { perceived: text, sameAsState, mind: mind.get(a) ?? "", mindChanged: changed, action: acts.get(a) ?? "none", leaks });
    }
    return { timestep, state, agents: perAgent, leaks: all };
  });
  return { agents, steps };
}
