/**
 * Where `export --out` may point: never at what the export reads (the run's benchmark file, its
 * episode log), and a sap export's folder is not left behind when it writes nothing.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { RunStore } from "../../store/run-store.js";
import { benchRun, capture, type Captured } from "./helpers.js";

let io: Captured;
beforeEach(() => {
  io = capture();
});
afterEach(() => vi.restoreAllMocks());

describe("export --out naming an input", () => {
  it("refuses the run's benchmark file and its episode log as --out (usage error, inputs untouched)", async () => {
    const run = await benchRun("tomi", 4, 3);
    const store = await RunStore.open(run.store);
    const logPath = store.episodesPath(store.get(run.runId)!);
    const data = readFileSync(run.data);
    const log = readFileSync(logPath);
    for (const format of ["chat", "verl", "sft"]) {
      expect(await main(["export", "--run", run.runId, "--format", format, "--out", run.data, "--store", run.store])).toBe(2);
      expect(await main(["export", "--run", run.runId, "--format", format, "--out", run.data, "--data", run.data, "--store", run.store])).toBe(2);
      expect(await main(["export", "--run", run.runId, "--format", format, "--out", logPath, "--store", run.store])).toBe(2);
    }
    expect(io.err).toContain("--out");
    expect(readFileSync(run.data).equals(data)).toBe(true);
    expect(readFileSync(logPath).equals(log)).toBe(true);
  });
});

describe("export --format sap that writes nothing", () => {
  it("leaves no folder behind, and names --out when it is a file", async () => {
    const run = await benchRun("tomi", 4, 3); // vanilla: no context written by the agent
    const out = join(run.dir, "new", "gen");
    expect(await main(["export", "--run", run.runId, "--format", "sap", "--source", "agent", "--out", out, "--store", run.store])).not.toBe(0);
    expect(existsSync(join(run.dir, "new"))).toBe(false);
    expect(await main(["export", "--run", run.runId, "--format", "sap", "--layout", "swm", "--data", join(run.dir, "moved.txt"), "--out", out, "--store", run.store])).not.toBe(0);
    expect(existsSync(join(run.dir, "new"))).toBe(false);
    const file = join(run.dir, "a-file.json");
    writeFileSync(file, "{}");
    io.err = "";
    expect(await main(["export", "--run", run.runId, "--format", "sap", "--out", file, "--store", run.store])).toBe(2);
    expect(io.err).toContain("--out");
  });
});

describe("export of a run that did not finish", () => {
  it("exports what was logged and says the run is not done", async () => {
    const run = await benchRun("tomi", 4, 3);
    const store = await RunStore.open(run.store);
    await store.update(run.runId, { status: "interrupted" });
    const out = join(run.dir, "part.jsonl");
    expect(await main(["export", "--run", run.runId, "--format", "chat", "--out", out, "--store", run.store])).toBe(0);
    expect(readFileSync(out, "utf8").trimEnd().split("\n")).toHaveLength(4);
    expect(io.err).toContain(`note: run ${run.runId} is interrupted: the export holds the 4 records it logged, not the whole benchmark\n`);
  });
});
