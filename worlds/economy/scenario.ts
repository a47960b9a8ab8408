/**
 * The economy as a room plays it: the world, the seeded initial economy, and the rule-based
 * household that runs each seat nobody takes (the heuristic by default). Shaped like the rooms'
 * scenarios (a world, a title, an initial state, the scripted agents, a step limit), without
 * importing them: a household agent is any object with `id`, `trusted` and `act`.
 */
import type { Observation } from "../core/world.js";
import type { HouseholdDecision } from "./action.js";
import { HouseholdObservationSchema } from "./observation.js";
import { economyParams, type EconomyParamsInput } from "./params.js";
import { fixedPolicy, heuristicPolicy, randomPolicy, type HouseholdPolicy } from "./policies.js";
import { initialEconomy, type EconomyState } from "./state.js";
import { EconomyWorld } from "./world.js";

/** A rule-based household as a game-loop agent: it decides from its observation's data only. */
export interface HouseholdAgent {
  readonly id: string;
  /** Its decisions are in [0, 1] by construction. */
  readonly trusted: true;
  act(turn: { readonly observation: Observation }): { action: HouseholdDecision };
}

export function householdAgent(policy: HouseholdPolicy): HouseholdAgent {
  return {
    id: policy.id,
    trusted: true,
    act(turn) {
      // A turn of this world always carries the household's view; anything else is a wiring bug.
      const view = HouseholdObservationSchema.safeParse(turn.observation.data);
      if (!view.success) throw new Error(`${policy.id} household: the turn has no household observation (${view.error.issues[0]?.message})`);
      return { action: policy.decide(view.data) };
    },
  };
}

/** Which rule-based household plays the seats nobody takes. */
export type SeatPolicy = { readonly kind: "heuristic" } | { readonly kind: "random" } | { readonly kind: "fixed"; readonly work: number; readonly consumption: number };

export function seatPolicy(spec: SeatPolicy, seed: number): HouseholdPolicy {
  if (spec.kind === "random") return randomPolicy(seed);
  if (spec.kind === "fixed") return fixedPolicy(spec.work, spec.consumption);
  return heuristicPolicy(seed);
}

export interface EconomyScenario {
  readonly world: EconomyWorld;
  readonly title: string;
  readonly initialState: EconomyState;
  readonly scripted: Readonly<Record<string, HouseholdAgent>>;
  readonly maxSteps: number;
}

const world = new EconomyWorld();

/** A new economy for `seed`: the same seed and parameters give the same economy. */
export function economyScenario(seed: number, input: EconomyParamsInput = {}, seats: SeatPolicy = { kind: "heuristic" }): EconomyScenario {
  const params = economyParams(input);
  const initialState = initialEconomy(params, seed);
  const policy = seatPolicy(seats, seed);
  const agent = householdAgent(policy);
  const scripted: Record<string, HouseholdAgent> = {};
  for (const name of initialState.names) scripted[name] = agent;
  return {
    world,
    title: `Economy: ${params.households} households, ${params.months} months (${policy.id} households)`,
    initialState,
    scripted,
    maxSteps: params.months + 1,
  };
}
