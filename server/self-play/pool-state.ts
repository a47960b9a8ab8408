/**
 * What a self-play pool keeps of itself across restarts, in <store>/selfplay/<pool>/pool.json: its
 * finished rounds, its held-out episodes and every round's scores. Without it a pool whose server
 * restarted (or whose rooms all closed and came back) began again from the starting policy, wrote
 * its next round over round-1's checkpoint, and held out a new set of episodes, so that the
 * board's held-out curve compared rounds on different questions.
 *
 * Paths are kept relative (rounds to the pool's folder, quiz files to the store), so that a store
 * moved as a whole still restores. The episodes a round would have trained on are not kept: they
 * are in the rooms' logs, and the next round trains on the episodes played from then on.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../store/write-atomic.js";

export const POOL_STATE_FILE = "pool.json";

const count = z.number().int().min(0);

const PoolStateSchema = z
  .object({
    format: z.literal(1),
    world: z.string().min(1),
    /** The seats' spec the pool trains: a pool of that name with another policy is another pool. */
    baseSpec: z.string().min(1),
    /** Each finished round's checkpoint folder, in order (round K is rounds[K - 1]). */
    rounds: z.array(z.string().min(1)),
    /** The held-out episodes' quiz files, in the order they were played. */
    heldOut: z.array(z.string().min(1)),
    heldOutScores: z.array(z.object({ round: count, questions: count, correct: count, questionSet: z.string() }).strict()),
    /** Quiz answers by the round whose policy gave them, on the episodes it played. */
    quiz: z.array(z.object({ round: count, episodes: count, questions: count, correct: count }).strict()),
  })
  .strict();

export type PoolState = z.infer<typeof PoolStateSchema>;

/** A pool's saved state with absolute paths; undefined when the pool has none yet. */
export function readPoolState(poolDir: string, storeRoot: string): PoolState | undefined {
  const file = join(poolDir, POOL_STATE_FILE);
  if (!existsSync(file)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
  const parsed = PoolStateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${file}: ${issue.path.join(".") || "(top)"}: ${issue.message}`);
  }
  const s = parsed.data;
  return { ...s, rounds: s.rounds.map((r) => resolve(poolDir, r)), heldOut: s.heldOut.map((f) => resolve(storeRoot, f)) };
}

/** Writes the state (paths inside the pool's folder or the store made relative), atomically. */
export function writePoolState(poolDir: string, storeRoot: string, state: PoolState): void {
  const rel = (base: string, p: string) => {
    const r = relative(base, p);
    return r.startsWith("..") || isAbsolute(r) ? p : r;
  };
  mkdirSync(poolDir, { recursive: true });
  const saved: PoolState = { ...state, rounds: state.rounds.map((r) => rel(poolDir, r)), heldOut: state.heldOut.map((f) => rel(storeRoot, f)) };
  writeFileAtomic(join(poolDir, POOL_STATE_FILE), JSON.stringify(saved, null, 1) + "\n");
}
