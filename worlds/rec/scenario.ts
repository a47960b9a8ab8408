/**
 * The recommendation world as a room plays it: a generated catalogue and users (seeded), one of
 * them the episode's user, whose last `steps` films are held out and watched one per timestep.
 * The recallers (pop, item-kNN, BPR) are fitted on every other user's films and this user's
 * history, never on the films to come; their fixed mixture gives each timestep's candidates, and
 * the seat nobody takes recommends the mixture's top 10.
 *
 * A room's `worldOptions` bound what its creation costs the server (generating, fitting BPR):
 * at most ROOM_MAX_USERS users and ROOM_MAX_ITEMS films.
 */
import { z } from "zod";
import type { Scenario, ScenarioFactory } from "../core/scenario.js";
import { Rng } from "../core/rng.js";
import { generateRec } from "./generator.js";
import { topK } from "./ranking.js";
import { fitRecaller, RECALLERS } from "./recallers/fit.js";
import { mixtureRecaller } from "./recallers/mixture.js";
import { leaveLastOut } from "./split.js";
import { RecWorld, RECOMMENDER, ROOM_K, type RecList, type RecObservationData, type RecRoomState } from "./world.js";

export const ROOM_MAX_USERS = 500;
export const ROOM_MAX_ITEMS = 500;
/** Films the recommender is shown as candidates each timestep. */
export const ROOM_CANDIDATES = 20;
/** The candidates' mixture: the best fixed mixture of the generated medium shape (docs/recommendation.md). */
export const ROOM_MIXTURE = { pop: 0.1, itemknn: 0.4, bpr: 0.5 } as const;
const MEAN_LENGTH = 20;

export const RecRoomOptionsSchema = z
  .object({
    users: z.number().int().min(20).max(ROOM_MAX_USERS).default(200).describe(`Generated users the recallers learn from (at most ${ROOM_MAX_USERS}: they are fitted when the episode starts).`),
    items: z
      .number()
      .int()
      .min(2 * MEAN_LENGTH)
      .max(ROOM_MAX_ITEMS)
      .default(150)
      .describe(`Films in the generated catalogue (at most ${ROOM_MAX_ITEMS}).`),
    steps: z.number().int().min(1).max(20).default(5).describe("Films the episode's user watches, one per timestep: the recommender's turns."),
  })
  .strict();
export type RecRoomOptions = z.input<typeof RecRoomOptionsSchema>;

/** The seat nobody takes: the mixture's top 10 of the candidates it is shown, trusted (valid by construction). */
export const mixtureRecommender = {
  id: "mixture",
  trusted: true as const,
  act(turn: { readonly observation: { readonly data?: unknown } }): { action: RecList } {
    const data = turn.observation.data as RecObservationData | undefined;
    if (!data?.candidates) throw new Error("mixture recommender: the turn has no candidates (not a rec room's observation)");
    return { action: { items: data.candidates.slice(0, ROOM_K).map((m) => m.id) } };
  },
};

export interface RecScenario extends Scenario<RecRoomState, RecList> {
  readonly initialState: RecRoomState;
  readonly maxSteps: number;
}

const world = new RecWorld();

/** The episode of `seed`: the same seed and options give the same user, films and candidates. */
export function recScenario(seed: number, options: RecRoomOptions = {}): RecScenario {
  const o = RecRoomOptionsSchema.parse(options);
  const split = leaveLastOut(generateRec({ users: o.users, items: o.items, meanLength: MEAN_LENGTH }, seed).dataset);
  const sequences = split.users.map((u) => [...u.train, ...(u.valid !== undefined ? [u.valid] : []), ...(u.test !== undefined ? [u.test] : [])]);
  const eligible = sequences.flatMap((s, i) => (s.length >= o.steps + 5 ? [i] : []));
  if (eligible.length === 0) throw new RangeError(`no generated user has ${o.steps + 5} films (steps + 5): ask for fewer steps`);
  const u = eligible[Rng.seeded(`rec-room:${seed}`).int(eligible.length)]!;
  const seq = sequences[u]!;
  const cut = seq.length - o.steps;
  const rows = sequences.map((s, i) => (i === u ? s.slice(0, cut) : s));
  const train = { users: rows.length, items: split.items.length, rows };
  const mixture = mixtureRecaller(
    RECALLERS.map((name) => fitRecaller(name, train, { bpr: { seed, epochs: 10 } })),
    ROOM_MIXTURE,
  );
  const scores = new Float64Array(split.items.length);
  const candidates = Array.from({ length: o.steps }, (_, t) => {
    const history = seq.slice(0, cut + t);
    mixture.score(u, history, scores);
    return topK(scores, ROOM_CANDIDATES, history).map((i) => split.items[i]!);
  });
  const film = (i: number) => split.items[i]!;
  const initialState: RecRoomState = { user: split.users[u]!.user, history: seq.slice(0, cut).map(film), upcoming: seq.slice(cut).map(film), candidates, t: 0, scores: [] };
  return {
    world,
    title: `Recommendation: user ${initialState.user}, ${o.steps} films to come`,
    initialState,
    scripted: { [RECOMMENDER]: mixtureRecommender },
    maxSteps: o.steps + 1,
  };
}

export const recScenarios: ScenarioFactory = {
  episodes: "users",
  describe: `a generated user watching films one by one, a recommender ranking ${ROOM_K} of them each time (rewarded with NDCG@${ROOM_K}); the seat nobody takes recommends the recallers' mixture`,
  options: RecRoomOptionsSchema,
  async create(seed, options) {
    return recScenario(seed, RecRoomOptionsSchema.parse(options ?? {})) as unknown as Scenario;
  },
};

