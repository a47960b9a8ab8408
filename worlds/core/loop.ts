/**
 * The game loop every world, room and benchmark uses.
 *
 * Each timestep: every agent observes the current state, all agents act at once (asynchronously,
 * each against its deadline), the environment adds its exogenous events, and the world steps.
 * Every timestep is recorded; the last one, after termination, only observes (all actions none),
 * as the socialized-context format expects.
 */
import { z } from "zod";
import { AgentFailure, TurnTimeout, type Agent, type AgentReply, type AgentTurn } from "./agent.js";
import type { Episode, TimestepRecord, TurnFailure, TurnRecord } from "./episode.js";
import { LazyRng, TimestepContext } from "./step-context.js";
import type { Observation, World, WorldEvent } from "./world.js";

/** Supplies the environment's exogenous events: a story's narrator, a scenario script. */
export interface Director<S, X> {
  exogenous(state: S, timestep: number): readonly X[];
  /** True when the script is over (the episode ends even if the world could go on). */
  done?(state: S, timestep: number): boolean;
}

export interface LoopOptions<S, A, X> {
  readonly seed: number | string;
  readonly initialState: S;
  /** Agents by name; a world agent without one does nothing. */
  readonly agents: Readonly<Record<string, Agent<A>>>;
  readonly director?: Director<S, X>;
  /** How long an agent may think per turn; past it the fallback acts. Unset: no limit. */
  readonly turnTimeoutMs?: number;
  readonly maxSteps?: number;
  /** Acts for an agent that timed out, failed or gave an invalid action (default: do nothing). */
  readonly fallback?: Agent<A>;
  /** Called after each recorded timestep (rooms stream these live). */
  readonly onTimestep?: (record: TimestepRecord, state: S) => void | Promise<void>;
  readonly signal?: AbortSignal;
  /** Record each agent's mental state every timestep (default true). */
  readonly mentalStates?: boolean;
  /** Throw an InvalidActionError instead of falling back (replaying a story, where a bad step is bad data). */
  readonly strict?: boolean;
}

export class InvalidActionError extends Error {
  constructor(
    readonly agent: string,
    readonly timestep: number,
    readonly reason: string,
  ) {
    super(`timestep ${timestep}: ${agent}: ${reason}`);
    this.name = "InvalidActionError";
  }
}

const NO_EVENTS: readonly never[] = Object.freeze([]);

/** A turn's fields, with the action schema built only if someone reads it. */
interface TurnFields<A> {
  readonly world: string;
  readonly agent: string;
  readonly timestep: number;
  readonly episode: number | string;
  readonly observation: Observation;
  readonly schemaOf: () => z.ZodType<A>;
  readonly options: readonly A[] | undefined;
}

/**
 * A turn as an agent sees it, its action schema built when first read. A class, not an object
 * literal with a getter: V8 gives every such literal a hidden class of its own, kept in old space
 * with the getter's closure, which held each finished episode alive until a full collection (a
 * ToMi val run spent twice as long in the garbage collector that way).
 */
class Turn<A> implements AgentTurn<A> {
  readonly world: string;
  readonly agent: string;
  readonly timestep: number;
  readonly episode: number | string;
  readonly observation: Observation;
  readonly options?: readonly A[];
  readonly signal?: AbortSignal;
  readonly deadline?: number;
  private readonly schemaOf: () => z.ZodType<A>;

  constructor(f: TurnFields<A>, signal: AbortSignal | undefined, deadline: number | undefined) {
    this.world = f.world;
    this.agent = f.agent;
    this.timestep = f.timestep;
    this.episode = f.episode;
    this.observation = f.observation;
    this.schemaOf = f.schemaOf;
    if (f.options) this.options = f.options;
    if (signal) this.signal = signal;
    if (deadline !== undefined) this.deadline = deadline;
  }

  get actionSchema(): z.ZodType<A> {
    return this.schemaOf();
  }
}

interface Decision<A> {
  readonly action: A;
  readonly reply: AgentReply<A> | undefined;
  readonly source: "agent" | "fallback";
  readonly error: string | undefined;
  readonly failure: TurnFailure | undefined;
  readonly latencyMs: number;
}

/** A decision with every field set (absent ones undefined). */
function decision<A>(
  action: A,
  reply: AgentReply<A> | undefined,
  source: Decision<A>["source"],
  error: { readonly error: string; readonly failure: TurnFailure } | undefined,
  latencyMs: number,
): Decision<A> {
  return { action, reply, source, error: error?.error, failure: error?.failure, latencyMs };
}

export async function runEpisode<S, A, X>(world: World<S, A, X>, opts: LoopOptions<S, A, X>): Promise<Episode<S>> {
  const run = new EpisodeRun(world, opts);
  for (;;) {
    const asked = run.observe();
    if (asked === undefined) break;
    // Synchronous agents (scripts, the symbolic agents) never make the loop wait on a promise.
    const decisions = asked.pending ? await Promise.all(asked.decisions) : (asked.decisions as Decision<A>[]);
    const pending = run.apply(decisions);
    if (pending) await pending;
  }
  const pending = run.finish();
  if (pending) await pending;
  return run.episode();
}

/** One episode in progress, a timestep at a time: the loop above only awaits, the work is in these methods. */
class EpisodeRun<S, A, X> {
  private readonly rng: LazyRng;
  private readonly maxSteps: number;
  private readonly recordMind: boolean;
  private state: S;
  private readonly agents: string[];
  private readonly steps: TimestepRecord[] = [];
  private readonly turns: TurnRecord[] = [];
  private readonly returns: Record<string, number> = {};
  private end: Episode["end"] = "terminal";
  private t = 0;
  private observations: Record<string, Observation> = {};
  private mentalStates: Record<string, string | undefined> = {};
  private stateText = "";

  constructor(
    private readonly world: World<S, A, X>,
    private readonly opts: LoopOptions<S, A, X>,
  ) {
    this.rng = new LazyRng(opts.seed);
    this.maxSteps = opts.maxSteps ?? 10_000;
    this.recordMind = opts.mentalStates ?? true;
    this.state = opts.initialState;
    this.agents = world.agents(this.state).slice();
    // Indexed loops here and below: a benchmark runs an episode per question.
    for (let i = 0; i < this.agents.length; i++) this.returns[this.agents[i]!] = 0;
  }

  /** Observes the next timestep and asks every agent; undefined when the episode is over. */
  observe(): { decisions: (Decision<A> | Promise<Decision<A>>)[]; pending: boolean } | undefined {
    const { world, opts, state, agents } = this;
    const t = ++this.t;
    const observations: Record<string, Observation> = {};
    const mentalStates: Record<string, string | undefined> = {};
    for (let i = 0; i < agents.length; i++) {
      const name = agents[i]!;
      observations[name] = world.observe(state, name);
      if (this.recordMind) mentalStates[name] = world.mentalState?.(state, name);
    }
    this.observations = observations;
    this.mentalStates = mentalStates;
    this.stateText = world.describe(state);
    const aborted = opts.signal?.aborted ?? false;
    const over = world.isTerminal(state) || (opts.director?.done?.(state, t) ?? false);
    if (over || aborted || t > this.maxSteps) {
      if (aborted) this.end = "aborted";
      else if (!over) this.end = "max_steps";
      return undefined;
    }
    const decisions: (Decision<A> | Promise<Decision<A>>)[] = [];
    let pending = false;
    for (let i = 0; i < agents.length; i++) {
      const name = agents[i]!;
      const d = decide(world, state, name, t, observations[name]!, opts);
      if (isPromise(d)) pending = true;
      decisions.push(d);
    }
    return { decisions, pending };
  }

  /** Applies the joint action, records the timestep, and moves on to the next state. */
  apply(decisions: readonly Decision<A>[]): void | Promise<void> {
    const { world, opts, state, agents, t } = this;
    const joint = new Map<string, A>();
    for (let i = 0; i < agents.length; i++) joint.set(agents[i]!, decisions[i]!.action);
    const exogenous = opts.director?.exogenous(state, t) ?? NO_EVENTS;
    const result = world.step(state, joint, new TimestepContext(this.rng, exogenous));

    const actions: Record<string, string> = {};
    for (let i = 0; i < agents.length; i++) {
      const name = agents[i]!;
      const d = decisions[i]!;
      const noop = world.isNoop(d.action);
      actions[name] = noop ? "none" : world.renderAction(state, name, d.action);
      const reward = result.rewards?.[name];
      if (reward !== undefined) this.returns[name] = (this.returns[name] ?? 0) + reward;
      const asked = opts.agents[name];
      // Scripted agents idle most turns; their no-ops are not worth a log line. Everyone else's are.
      if (asked && (!noop || !asked.trusted || d.error)) {
        // Optional fields stay undefined (JSON leaves them out): no temporary object per field.
        this.turns.push({
          agent: name,
          timestep: t,
          observation: this.observations[name]!,
          prompt: d.reply?.prompt,
          raw: d.reply?.raw,
          action: d.action,
          actionText: actions[name]!,
          source: d.source,
          error: d.error,
          failure: d.failure,
          reward,
          latencyMs: d.latencyMs,
          info: d.reply?.info,
        });
      }
    }
    const record: TimestepRecord = {
      timestep: t,
      state: this.stateText,
      observations: this.observations,
      actions,
      mentalStates: this.mentalStates,
      events: result.events,
      exogenous: exogenous.length ? exogenous : undefined,
      rewards: result.rewards,
    };
    this.steps.push(record);
    this.state = result.state;
    return opts.onTimestep?.(record, this.state);
  }

  /** The last timestep only observes (every action none), as the socialized context expects. */
  finish(): void | Promise<void> {
    const actions: Record<string, string> = {};
    for (let i = 0; i < this.agents.length; i++) actions[this.agents[i]!] = "none";
    const record: TimestepRecord = {
      timestep: this.t,
      state: this.stateText,
      observations: this.observations,
      actions,
      mentalStates: this.mentalStates,
      events: NO_EVENTS,
      exogenous: undefined,
      rewards: undefined,
    };
    this.steps.push(record);
    return this.opts.onTimestep?.(record, this.state);
  }

  episode(): Episode<S> {
    const { world, opts, agents, steps, turns, state, returns, end } = this;
    return { world: world.name, seed: opts.seed, agents, steps, turns, finalState: state, returns, end };
  }
}

/**
 * One agent's decision. Synchronous agents (scripts, the symbolic agents) get a synchronous
 * answer: with a promise per agent per timestep, a ToMi val run took an eighth more work.
 */
function decide<S, A, X>(
  world: World<S, A, X>,
  state: S,
  name: string,
  timestep: number,
  observation: Observation,
  opts: LoopOptions<S, A, X>,
): Decision<A> | Promise<Decision<A>> {
  const agent = opts.agents[name];
  if (!agent) return decision(world.noop(state, name), undefined, "agent", undefined, 0);
  // Built on first use: trusted agents never look at it, and building schemas is not free.
  let schema: z.ZodType<A> | undefined;
  const schemaOf = () => (schema ??= world.actionSchema(state, name));
  const started = performance.now();
  const options = agent.trusted ? undefined : world.options?.(state, name);
  const base: TurnFields<A> = { world: world.name, agent: name, timestep, episode: opts.seed, observation, schemaOf, options };

  const settle = (first: Asked<A>): Decision<A> | Promise<Decision<A>> => {
    let failed = first.failed;
    if (!failed) {
      const checked = accept(world, state, name, agent, schemaOf, first.reply!.action);
      if ("action" in checked) {
        return decision(checked.action, first.reply, "agent", undefined, performance.now() - started);
      }
      failed = { error: checked.error, failure: "invalid" };
    }
    if (opts.strict) throw new InvalidActionError(name, timestep, failed.error);
    // What the agent was asked and answered stays in the log, whatever acts in its place.
    const attempt = first.reply ?? first.partial;
    return fallback(world, state, name, { ...base, options: options ?? world.options?.(state, name) }, schemaOf, failed, attempt, started, opts);
  };
  const first = ask(agent, base, opts);
  return isPromise(first) ? first.then(settle) : settle(first);
}

/** The agent failed: the episode goes on with the fallback (or nothing), and the failure is logged. */
async function fallback<S, A, X>(
  world: World<S, A, X>,
  state: S,
  name: string,
  base: TurnFields<A>,
  schemaOf: () => z.ZodType<A>,
  error: Failed,
  attempt: Omit<AgentReply<A>, "action"> | undefined,
  started: number,
  opts: LoopOptions<S, A, X>,
): Promise<Decision<A>> {
  // The turn's prompt, raw reply and info are the failed agent's when it had any (the fallback
  // is a stand-in with nothing to say); else the fallback's.
  const logged = (action: A, reply: AgentReply<A> | undefined): AgentReply<A> | undefined =>
    attempt === undefined ? reply : { action, prompt: attempt.prompt, raw: attempt.raw, info: attempt.info };
  if (opts.fallback) {
    const second = await ask(opts.fallback, base, opts);
    if (!second.failed) {
      const checked = accept(world, state, name, opts.fallback, schemaOf, second.reply!.action);
      if ("action" in checked) {
        return decision(checked.action, logged(checked.action, second.reply), "fallback", error, performance.now() - started);
      }
    }
  }
  const noop = world.noop(state, name);
  return decision(noop, logged(noop, undefined), "fallback", error, performance.now() - started);
}

function accept<S, A, X>(
  world: World<S, A, X>,
  state: S,
  name: string,
  agent: Agent<A>,
  schema: () => z.ZodType<A>,
  raw: unknown,
): { action: A } | { error: string } {
  let action = raw as A;
  if (!agent.trusted) {
    const parsed = schema().safeParse(raw);
    if (!parsed.success) return { error: `invalid action: ${z.prettifyError(parsed.error).replace(/\n/g, "; ")}` };
    action = parsed.data;
  }
  if (world.isNoop(action)) return { action };
  const reason = world.check?.(state, name, action);
  return reason ? { error: `action not possible: ${reason}` } : { action };
}

/** A turn's failure: the message for people, its kind for code. */
interface Failed {
  readonly error: string;
  readonly failure: TurnFailure;
}

interface Asked<A> {
  reply?: AgentReply<A>;
  failed?: Failed;
  /** What a failing agent had done (AgentFailure): logged with the fallback's action. */
  partial?: Omit<AgentReply<A>, "action">;
}

/** A failed agent's answer as the loop keeps it. */
function failed<A>(err: unknown): Asked<A> {
  const f: Failed = { error: `agent error: ${errorMessage(err)}`, failure: err instanceof TurnTimeout ? "timeout" : "error" };
  return err instanceof AgentFailure ? { failed: f, partial: err.partial } : { failed: f };
}

function ask<A>(agent: Agent<A>, base: TurnFields<A>, opts: { turnTimeoutMs?: number; signal?: AbortSignal }): Asked<A> | Promise<Asked<A>> {
  let result: AgentReply<A> | Promise<AgentReply<A>>;
  const timeout = opts.turnTimeoutMs;
  // A controller of its own only when there is a deadline to enforce; else the episode's signal.
  const controller = timeout !== undefined ? new AbortController() : undefined;
  const signal = controller?.signal ?? opts.signal;
  const turn = new Turn(base, signal, timeout === undefined ? undefined : Date.now() + timeout);
  try {
    result = agent.act(turn);
  } catch (err) {
    return failed(err);
  }
  if (!isPromise(result)) return { reply: result };
  if (timeout === undefined) {
    // No deadline to race against: just the agent's own answer (or failure).
    return result.then((reply) => ({ reply }), failed<A>);
  }
  return race(result, timeout, controller, opts.signal);
}

async function race<A>(
  result: Promise<AgentReply<A>>,
  timeout: number,
  controller: AbortController | undefined,
  outer: AbortSignal | undefined,
): Promise<Asked<A>> {
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => controller?.abort();
  if (controller) outer?.addEventListener("abort", onAbort, { once: true });
  try {
    const racers: Promise<Asked<A>>[] = [
      result.then((reply) => ({ reply }), failed<A>),
    ];
    racers.push(
      new Promise((resolve) => {
        timer = setTimeout(() => {
          controller?.abort();
          resolve({ failed: { error: `timeout after ${timeout} ms`, failure: "timeout" } });
        }, timeout);
      }),
    );
    return await Promise.race(racers);
  } finally {
    if (timer) clearTimeout(timer);
    if (controller) outer?.removeEventListener("abort", onAbort);
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Events observed by `agent`, in order (a convenience for worlds' observation functions). */
export function eventsSeenBy(events: readonly WorldEvent[], agent: string): WorldEvent[] {
  return events.filter((e) => e.observers.includes(agent));
}
