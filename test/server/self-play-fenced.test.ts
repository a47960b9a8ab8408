/**
 * A self-play pool's round in a server of a group whose process is not known to hold its place
 * (server/self-play/pool.ts, store/write-fence.ts): the round waits for the write lease before its
 * first write, and refused (the process was declared dead) it does not begin; the refusal is
 * logged, never an unhandled rejection (which ended the server), and the episodes it was to train
 * on are kept for the next round.
 */
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Fence } from "../../server/group/fence.js";
import { ProgressHub } from "../../server/progress-hub.js";
import { SelfPlayOptionsSchema } from "../../server/self-play/options.js";
import { SelfPlayPool, type PlayedEpisode } from "../../server/self-play/pool.js";
import { TrainingBoard } from "../../server/training-board.js";
import { RunStore } from "../../store/run-store.js";
import { clocksNow, fenceWrites } from "../../store/write-fence.js";
import { tempDir } from "../policy/fixtures.js";
import { until } from "./raw-client.js";

afterEach(() => fenceWrites(undefined));

/** An episode as a room hands it to the pool; the round that would read its turns never begins here. */
const episode = (seed: number) => ({ roomId: "room-a", seed, title: `episode ${seed}`, context: {}, turns: [], quizFile: `quiz-${seed}.jsonl` }) as unknown as PlayedEpisode;

describe("a self-play round under a write fence", () => {
  it("waits for the lease before it begins and, refused, does not begin: logged, its episodes kept", async () => {
    const fence = new Fence("socialworld:process:test:dead");
    fence.renewed(clocksNow(), -1);
    fenceWrites(fence);
    const store = await RunStore.open(tempDir("sw-pool-fenced-"));
    // A round stopped before it finished: the next one's first write sets its folder aside.
    const poolDir = join(store.root, "selfplay", "p");
    mkdirSync(join(poolDir, "round-1"), { recursive: true });
    const pool = new SelfPlayPool("p", "tomi", "policy:/nonexistent/policy", SelfPlayOptionsSchema.parse({ everyEpisodes: 2 }), store, new TrainingBoard(new ProgressHub()));
    const errors: string[] = [];
    const error = console.error;
    console.error = (msg: string) => errors.push(msg);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      pool.record(episode(1));
      pool.record(episode(2));
      // Due, it waits for the lease; then its process is found declared dead.
      await new Promise((r) => setTimeout(r, 50));
      expect(errors).toEqual([]);
      fence.trip("machine-b/2/2");
      await until(() => errors.length > 0, 10_000, "the refusal to be logged");
      expect(errors[0]).toMatch(/^\[self-play p\] round not started: .*declared dead.*; its episodes are kept for the next one/);
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
      // Nothing written; both episodes still count toward the next round.
      expect(readdirSync(poolDir)).toEqual(["round-1"]);
      expect((pool as unknown as { fresh: number }).fresh).toBe(2);
    } finally {
      console.error = error;
      process.off("unhandledRejection", onUnhandled);
      await pool.close();
    }
  });
});
