/**
 * A run of the economy a month at a time (`socialworld simulate economy`), with a household rule
 * for every household or a model agent asked for each: the same transition and random stream as
 * the world and the fast simulation (simulate.ts), so the same decisions give the same economy.
 * Each month gives its `episode_step` record (worlds/core/episode-step.ts): the logged
 * households' prompts, decisions and turns, plus what replaying the month takes,
 *
 *   "decisions": {"work": [...], "consumption": [...]}   every household's decision
 *   "stats": the month's statistics (MonthStats)
 *
 * and a resumed run replays its logged months' decisions through the transition.
 *
 * A model agent is asked for every household at once, so a policy's engine decodes the month's
 * prompts in batches. A reply it cannot read as a decision gets EconAgent's own fallback (work 1,
 * consumption 0.5), logged with the error; `strict` says whether the reply was exactly the
 * decision's JSON (the strict format the trainer rewards).
 */
import { z } from "zod";
import { AgentFailure, type Agent, type AgentTurn } from "../core/agent.js";
import type { EpisodeStepRecord, SteppedRun, StepTurn } from "../core/episode-step.js";
import { strictFormat } from "../core/rewards/strict-format.js";
import { errorMessage } from "../core/loop.js";
import { Rng } from "../core/rng.js";
import { ECONAGENT_FALLBACK, HouseholdDecisionSchema, type HouseholdDecision } from "./action.js";
import { stepEconomy } from "./dynamics.js";
import { householdObservation, publicStats, type PublicStats } from "./observation.js";
import type { EconomyParams } from "./params.js";
import type { HouseholdPolicy } from "./policies.js";
import { describeEconomy, renderDecision, renderObservation } from "./prompts.js";
import { summarizeRun, type EconomyRun } from "./simulate.js";
import { initialEconomy, type EconomyState, type MonthStats } from "./state.js";

/** Households whose views a rule-based run logs by default (a model's run logs them all). */
export const LOGGED_HOUSEHOLDS = 100;

/** Who decides: a rule for every household, or a model agent asked for each. */
export type Deciders = { readonly kind: "rule"; readonly policy: HouseholdPolicy } | { readonly kind: "model"; readonly agent: Agent };

export interface EconomyRunOptions {
  readonly params: EconomyParams;
  readonly seed: number;
  /** The agent's name in the report ("heuristic", "policy:ckpt"). */
  readonly agentId: string;
  readonly deciders: Deciders;
  /** Households whose prompts and decisions are logged as text (default: LOGGED_HOUSEHOLDS with a rule, all with a model). */
  readonly logHouseholds?: number;
}

/** How a model agent's replies went (its strict-format rate and fallbacks). */
export interface ReplyCounts {
  turns: number;
  strict: number;
  fallbacks: number;
}

/** What an economy month's record holds beyond the generic step: every household's decision. */
export const MonthDataSchema = z.object({
  decisions: z.object({ work: z.array(z.number().min(0).max(1)), consumption: z.array(z.number().min(0).max(1)) }),
});

interface ModelTurn extends StepTurn {
  /** The reply was exactly the decision's JSON. */
  readonly strict: boolean;
}

export class EconomyRunner implements SteppedRun {
  readonly world = "economy";
  readonly counts: ReplyCounts = { turns: 0, strict: 0, fallbacks: 0 };
  /** Households whose views are logged. */
  readonly logged: number;
  private readonly rng: Rng;
  private state: EconomyState;
  private readonly loggedNames: readonly string[];

  constructor(private readonly o: EconomyRunOptions) {
    this.rng = Rng.seeded(o.seed);
    this.state = initialEconomy(o.params, o.seed);
    const n = o.params.households;
    this.logged = Math.min(n, o.logHouseholds ?? (o.deciders.kind === "model" ? n : LOGGED_HOUSEHOLDS));
    this.loggedNames = this.state.names.slice(0, this.logged);
  }

  get done(): number {
    return this.state.month;
  }

  get total(): number {
    return this.o.params.months;
  }

  get economy(): EconomyState {
    return this.state;
  }

  /** The statistics of the last month run (undefined before the first). */
  get lastMonth(): MonthStats | undefined {
    return this.state.history.at(-1);
  }

  async step(): Promise<EpisodeStepRecord> {
    if (this.done >= this.total) throw new Error(`the run has all its ${this.total} months`);
    const state = this.state;
    const n = state.names.length;
    const month = state.month + 1;
    const economy = publicStats(state);
    const work = new Float64Array(n);
    const consumption = new Float64Array(n);
    const observations: string[] = [];
    const actions: string[] = [];
    const turns: StepTurn[] = [];
    if (this.o.deciders.kind === "rule") {
      const policy = this.o.deciders.policy;
      for (let i = 0; i < n; i++) {
        const o = householdObservation(state, i, economy);
        const d = policy.decide(o);
        work[i] = d.work;
        consumption[i] = d.consumption;
        if (i < this.logged) {
          // The turn is the decision alone: its observation is the step's, and the exporters
          // write the decision as the JSON the prompt asks for (a rule wrote no text).
          observations.push(renderObservation(o));
          actions.push(renderDecision(d));
          turns.push({ agent: state.names[i]!, action: d, source: "agent" });
        }
      }
    } else {
      const answers = await askHouseholds(this.o.deciders.agent, state, economy, month);
      answers.forEach((a, i) => {
        work[i] = a.decision.work;
        consumption[i] = a.decision.consumption;
        this.count(a.turn);
        if (i < this.logged) {
          observations.push(a.turn.observation!);
          actions.push(a.turn.actionText!);
          turns.push(a.turn);
        }
      });
    }
    const { state: next, stats } = stepEconomy(state, work, consumption, this.rng);
    this.state = next;
    return {
      kind: "episode_step",
      world: "economy",
      seed: this.o.seed,
      title: `economy: ${n} households (${this.logged} logged), ${this.o.agentId}`,
      agents_names: [...this.loggedNames],
      timestep: month,
      state: describeEconomy(economy, state.inventory),
      observations,
      actions,
      turns,
      decisions: { work: Array.from(work), consumption: Array.from(consumption) },
      stats,
    };
  }

  replay(record: EpisodeStepRecord): void {
    const month = this.state.month + 1;
    if (record.world !== "economy" || record.timestep !== month) throw new Error(`expected month ${month} of the economy, found ${record.world}'s timestep ${record.timestep}`);
    const data = MonthDataSchema.safeParse(record);
    if (!data.success) throw new Error(`month ${month}: ${data.error.issues[0]!.path.join(".")}: ${data.error.issues[0]!.message}`);
    const { work, consumption } = data.data.decisions;
    const n = this.state.names.length;
    if (work.length !== n || consumption.length !== n) throw new Error(`month ${month} holds ${work.length} decisions, not the ${n} households' of this run`);
    this.state = stepEconomy(this.state, work, consumption, this.rng).state;
    for (const t of record.turns) if (typeof t.strict === "boolean") this.count(t as ModelTurn);
  }

  /** The run so far: its yearly table and the two correlations. */
  result(): EconomyRun {
    return summarizeRun(this.o.agentId, this.o.seed, this.state);
  }

  report(): Record<string, unknown> {
    const r = this.result();
    const c = this.counts;
    return {
      world: "economy",
      agent: r.policy,
      seed: r.seed,
      households: this.o.params.households,
      months: this.state.month,
      params: this.o.params,
      years: r.years,
      phillips: r.phillips,
      okun: r.okun,
      okunRelative: r.okunRelative,
      ...(c.turns ? { replies: { turns: c.turns, strictFormatRate: c.strict / c.turns, fallbackRate: c.fallbacks / c.turns } } : {}),
    };
  }

  summary(): Record<string, unknown> {
    const r = this.result();
    const c = this.counts;
    return {
      months: this.state.month,
      phillips: r.phillips,
      okun: r.okun,
      ...(c.turns ? { strictFormat: c.strict / c.turns, fallbacks: c.fallbacks / c.turns } : {}),
    };
  }

  private count(t: ModelTurn): void {
    this.counts.turns++;
    if (t.strict) this.counts.strict++;
    if (t.source === "fallback") this.counts.fallbacks++;
  }
}

/** Every household's turn to the model agent at once (its engine batches them), each read or given the fallback. */
async function askHouseholds(agent: Agent, state: EconomyState, economy: PublicStats, month: number): Promise<{ decision: HouseholdDecision; turn: ModelTurn }[]> {
  return Promise.all(
    state.names.map(async (name, i) => {
      const o = householdObservation(state, i, economy);
      const observation = renderObservation(o);
      const turn: AgentTurn<HouseholdDecision> = { world: "economy", agent: name, timestep: month, observation: { text: observation, data: o }, actionSchema: HouseholdDecisionSchema };
      const fallback = (error: string, partial: { prompt?: string | undefined; raw?: string | undefined; info?: Readonly<Record<string, unknown>> | undefined }) => {
        const d = ECONAGENT_FALLBACK;
        const turn: ModelTurn = { agent: name, observation, ...defined(partial), action: d, actionText: renderDecision(d), source: "fallback", strict: false, error };
        return { decision: d, turn };
      };
      try {
        const reply = await agent.act(turn as AgentTurn);
        const parsed = HouseholdDecisionSchema.safeParse(reply.action);
        if (!parsed.success) return fallback(`invalid action: ${parsed.error.issues[0]?.message}`, reply);
        const strict = reply.raw !== undefined && strictFormat(reply.raw, HouseholdDecisionSchema).ok;
        const d = parsed.data;
        return { decision: d, turn: { agent: name, observation, ...defined(reply), action: d, actionText: renderDecision(d), source: "agent", strict } };
      } catch (err) {
        return fallback(errorMessage(err), err instanceof AgentFailure ? err.partial : {});
      }
    }),
  );
}

/** A reply's prompt, raw text and info, those it has. */
function defined(r: { prompt?: string | undefined; raw?: string | undefined; info?: Readonly<Record<string, unknown>> | undefined }): Pick<StepTurn, "prompt" | "raw" | "info"> {
  return { ...(r.prompt !== undefined ? { prompt: r.prompt } : {}), ...(r.raw !== undefined ? { raw: r.raw } : {}), ...(r.info ? { info: r.info } : {}) };
}
