/**
 * The training dashboard after a restart: a server started on a store shows the store's GRPO runs
 * with their steps (read from each run's metrics.jsonl), a run cut off by the previous process as
 * interrupted, and skips a torn last line.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer } from "../../server/main.js";
import { RunStore } from "../../store/run-store.js";

const metric = (step: number, reward: number) => ({ step, reward, accuracy: reward, kl: 0.001 * step, entropy: 1, clipFraction: 0, loss: 0.1, responseLength: 3 });

describe("training runs after a restart", () => {
  it("are back on the board with their steps; one cut off shows as interrupted", async () => {
    const root = mkdtempSync(join(tmpdir(), "sw-history-"));
    const store = await RunStore.open(join(root, "store"));
    const out1 = join(root, "store", "selfplay", "pool-a", "round-2");
    const out2 = join(root, "cli-run");
    for (const d of [out1, out2]) mkdirSync(d, { recursive: true });
    const done = await store.create("grpo", "Self-play pool-a: round 2", { trainer: "grpo", description: "world tomi (4 episodes)", out: out1, config: { steps: 3 } });
    await store.update(done.id, { status: "done", finishedAt: new Date().toISOString() });
    writeFileSync(join(out1, "metrics.jsonl"), [metric(1, 0.2), metric(2, 0.4), metric(3, 0.5)].map((m) => JSON.stringify(m) + "\n").join(""));
    const cut = await store.create("grpo", "GRPO: ToMi train", { trainer: "grpo", description: "ToMi train", out: out2, config: { steps: 10 } });
    writeFileSync(join(out2, "metrics.jsonl"), JSON.stringify(metric(1, 0.1)) + "\n" + '{"step": 2, "rew');
    await store.create("bench", "not training", {});

    const s = await startServer({ port: 0, host: "127.0.0.1", store: store.root, dataRoots: [], demo: false, clientDir: join(root, "no-client"), adminToken: "x".repeat(20) });
    try {
      const runs = ((await (await fetch(`${s.url}api/training`)).json()) as { runs: any[] }).runs;
      expect(runs.map((r) => r.runId).sort()).toEqual([done.id, cut.id].sort());
      const a = runs.find((r) => r.runId === done.id);
      expect(a).toMatchObject({ title: "Self-play pool-a: round 2", source: "world tomi (4 episodes)", steps: 3, status: "done", round: 2, checkpoint: out1 });
      expect(a.history.map((m: { reward: number }) => m.reward)).toEqual([0.2, 0.4, 0.5]);
      const b = runs.find((r) => r.runId === cut.id);
      expect(b).toMatchObject({ status: "interrupted", steps: 10 });
      expect(b.history.map((m: { step: number }) => m.step)).toEqual([1]);
    } finally {
      await s.close();
    }
  });
});
