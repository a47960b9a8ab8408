/**
 * The economy as a room plays it: the world, the seeded initial economy, and the rule-based
 * household that runs each seat nobody takes (DEFAULT_HOUSEHOLD_RULE, the responsive household,
 * unless the room names another). A household agent is any object with `id`, `trusted` and
 * `act`, as the game loop's agents are.
 *
 * A room's `worldOptions` are the economy's parameters (params.ts) and the seats' `rule`; a room
 * shows every household's view to its spectators, so it has fewer households by default than a
 * `simulate` run (ROOM_HOUSEHOLDS), and at most ROOM_MAX_HOUSEHOLDS.
 */
import { z } from "zod";
import type { Scenario, ScenarioFactory } from "../core/scenario.js";
import type { Observation } from "../core/world.js";
import type { HouseholdDecision } from "./action.js";
import { HouseholdObservationSchema } from "./observation.js";
import { checkBrackets, economyParams, EconomyParamsFields, type EconomyParamsInput } from "./params.js";
import { DEFAULT_HOUSEHOLD_RULE, HOUSEHOLD_RULES, householdRule, type HouseholdPolicy } from "./policies.js";
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

/** The rule named by `spec` (householdRule), or a RangeError naming the rules there are. */
export function ruleOrThrow(spec: string, seed: number | string): HouseholdPolicy {
  const policy = householdRule(spec, seed);
  if (!policy) throw new RangeError(`unknown household rule "${spec}" (rules: ${HOUSEHOLD_RULES.join(", ")})`);
  return policy;
}

export interface EconomyScenario extends Scenario<EconomyState, HouseholdDecision> {
  readonly world: EconomyWorld;
  readonly initialState: EconomyState;
  readonly scripted: Readonly<Record<string, HouseholdAgent>>;
  readonly maxSteps: number;
}

const world = new EconomyWorld();

/** A new economy for `seed`: the same seed and parameters give the same economy. */
export function economyScenario(seed: number, input: EconomyParamsInput = {}, rule = DEFAULT_HOUSEHOLD_RULE): EconomyScenario {
  const params = economyParams(input);
  const initialState = initialEconomy(params, seed);
  const policy = ruleOrThrow(rule, seed);
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

/** Households in a room unless its worldOptions say otherwise. */
export const ROOM_HOUSEHOLDS = 20;
/** The most a room takes: every household's view of every month goes to its spectators. */
export const ROOM_MAX_HOUSEHOLDS = 100;

/** A room's worldOptions: the economy's parameters and the rule of the seats nobody takes. */
export const EconomyRoomOptionsSchema = EconomyParamsFields.extend({
  households: z
    .number()
    .int()
    .min(1)
    .max(ROOM_MAX_HOUSEHOLDS)
    .default(ROOM_HOUSEHOLDS)
    .describe(`Number of households (a room sends every household's view to its spectators: ${ROOM_HOUSEHOLDS} by default, at most ${ROOM_MAX_HOUSEHOLDS}).`),
  rule: z
    .string()
    .default(DEFAULT_HOUSEHOLD_RULE)
    .superRefine((spec, ctx) => {
      try {
        ruleOrThrow(spec, 0);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: (err as Error).message });
      }
    })
    .describe(`The rule-based household that plays the seats nobody takes (${HOUSEHOLD_RULES.join(", ")}; ${DEFAULT_HOUSEHOLD_RULE} by default).`),
})
  .superRefine(checkBrackets)
  .superRefine(roomBounds);

/** The most skill batches and tax brackets a room takes. */
export const ROOM_MAX_SKILL_BATCHES = 1000;
export const ROOM_MAX_BRACKETS = 64;

// A room's options come from any client that may create rooms: what would hold the server's event
// loop (drawing the skills, the brackets each month) is bounded below what a command allows.
function roomBounds(p: { skillBatches: number; bracketCutoffs: readonly number[] }, ctx: z.RefinementCtx): void {
  if (p.skillBatches > ROOM_MAX_SKILL_BATCHES) ctx.addIssue({ code: "custom", path: ["skillBatches"], message: `at most ${ROOM_MAX_SKILL_BATCHES} in a room` });
  if (p.bracketCutoffs.length > ROOM_MAX_BRACKETS) ctx.addIssue({ code: "custom", path: ["bracketCutoffs"], message: `at most ${ROOM_MAX_BRACKETS} brackets in a room` });
}

export const economyScenarios: ScenarioFactory = {
  episodes: "economies",
  describe: "households deciding each month how much to work and spend (EconAgent's economy), rule-based households in the seats nobody takes",
  options: EconomyRoomOptionsSchema,
  async create(seed, options) {
    const { rule, ...params } = EconomyRoomOptionsSchema.parse(options ?? {});
    return economyScenario(seed, params, rule) as unknown as Scenario;
  },
};
