import { appendFileSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parquetReadObjects } from "hyparquet";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { loadBenchmark } from "../../worlds/registry.js";
import { EpisodeLog } from "../../store/episode-log.js";
import { RunStore } from "../../store/run-store.js";
import { runEpisode } from "../../worlds/core/loop.js";
import { toSocializedContext } from "../../worlds/core/socialize.js";
import { loadScenario } from "../../worlds/registry.js";
import { readExamples } from "../../trainers/sft/examples.js";
import { benchRun, capture, type Captured } from "./helpers.js";

let io: Captured;
beforeEach(() => {
  io = capture();
});
afterEach(() => vi.restoreAllMocks());

async function rowsOf(file: string): Promise<Record<string, unknown>[]> {
  const buf = readFileSync(file);
  return (await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) })) as Record<string, unknown>[];
}

describe("export --format sft and chat", () => {
  it("writes prompt/response Parquet and chat JSONL with answers in the form each prompt asks for", async () => {
    const run = await benchRun("hitom", 20, 5);
    const sft = join(run.dir, "sft.parquet");
    const chat = join(run.dir, "chat.jsonl");
    expect(await main(["export", "--run", run.runId, "--format", "sft", "--out", sft, "--store", run.store])).toBe(0);
    expect(await main(["export", "--run", run.runId, "--format", "chat", "--out", chat, "--store", run.store])).toBe(0);
    const bench = await loadBenchmark("hitom");
    const items = await bench.load(run.data);
    const rows = await rowsOf(sft);
    const lines = readFileSync(chat, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { messages: { role: string; content: string }[] });
    expect(rows).toHaveLength(items.length);
    expect(lines).toHaveLength(items.length);
    items.forEach((item, i) => {
      const row = rows[i]!;
      const prompt = bench.task(item, "vanilla").prompt;
      expect(row.prompt).toBe(prompt);
      expect(row.data_source).toBe("socialworld/hitom");
      expect((row.extra_info as { id: string }).id).toBe(item.id);
      // The prompt asks for "Answer: <letter>. <option>" (CoTP); the official judge reads it back.
      expect(row.response).toMatch(/^Answer: [A-O]\. /);
      expect(bench.judge(item, row.response as string).correct).toBe(true);
      expect(lines[i]).toEqual({ messages: [{ role: "user", content: prompt }, { role: "assistant", content: row.response }] });
    });
    // The project's own SFT trainer reads the chat export.
    const examples = readExamples(chat);
    expect(examples).toHaveLength(items.length);
    expect(examples[0]!.messages[1]!.content).toBe(rows[0]!.response);
  });

  it("takes the turns of live room episodes with --turns, counts what it cannot use, and keeps them out of VERL rows", async () => {
    const dir = (await benchRun("tomi", 6, 2)).dir;
    const store = await RunStore.open(join(dir, "store2"));
    const run = await store.create("room", "ToMi room", {});
    const log = new EpisodeLog(store.episodesPath(run));
    // Two episodes as the simulation room plays and logs them (server/rooms/simulation-room.ts).
    let turns = 0;
    for (const seed of [1, 2]) {
      const scenario = await (await loadScenario("tomi")).create(seed);
      const episode = await runEpisode(scenario.world, {
        seed,
        initialState: scenario.initialState,
        agents: scenario.scripted,
        ...(scenario.director ? { director: scenario.director } : {}),
        ...(scenario.maxSteps ? { maxSteps: scenario.maxSteps } : {}),
      });
      const logged = episode.turns.map((t) => ({
        agent: t.agent,
        timestep: t.timestep,
        observation: t.observation.text,
        action: t.action,
        actionText: t.actionText,
        source: t.source,
        latencyMs: t.latencyMs,
      }));
      turns += logged.filter((t) => t.observation.trim() !== "" && t.actionText !== "none" && t.source !== "fallback").length;
      // A turn the agent failed: the fallback's action is not a training example.
      logged.push({ ...logged[0]!, source: "fallback" });
      log.append({ kind: "room_episode", run: run.id, room: "r1", world: scenario.world.name, title: scenario.title, seed, episode: seed, end: episode.end, socialized_context: toSocializedContext(episode), turns: logged });
    }
    log.append({ kind: "negotiation_round", run: run.id, note: "a kind no exporter knows" });
    log.close();
    expect(turns).toBeGreaterThan(0);

    const base = ["--run", run.id, "--store", join(dir, "store2")];
    expect(await main(["export", ...base, "--format", "chat", "--out", join(dir, "none.jsonl")])).toBe(2);
    expect(io.err).toContain("skipped 2 room episodes");
    expect(io.err).toContain('skipped 1 records of unknown kind "negotiation_round"');
    expect(io.err).toMatch(/bad input: .*episodes\.jsonl: nothing to export as chat/);
    expect(existsSync(join(dir, "none.jsonl"))).toBe(false);

    io.err = "";
    expect(await main(["export", ...base, "--format", "sft", "--turns", "--out", join(dir, "turns.parquet")])).toBe(0);
    expect(io.err).toContain("skipped 2 turns a fallback took (the agent failed or ran out of time)");
    const rows = await rowsOf(join(dir, "turns.parquet"));
    expect(rows).toHaveLength(turns);
    for (const r of rows) {
      expect(r.data_source).toBe("socialworld/room/tomi");
      expect(typeof r.prompt).toBe("string");
      expect(r.response).not.toBe("none");
      expect(r.extra_info).toMatchObject({ world: "tomi", source: "agent", id: null, benchmark: null });
    }
    expect(await main(["export", ...base, "--format", "verl", "--turns", "--out", join(dir, "rl.parquet")])).toBe(2);
    expect(io.err).toContain("nothing to export as verl");
  });

  it("names the file and the way out when the run's data file is gone, changed, or the log is damaged", async () => {
    const run = await benchRun("tomi", 12, 4);
    const out = join(run.dir, "x.jsonl");
    const args = ["export", "--run", run.runId, "--format", "chat", "--out", out, "--store", run.store];
    renameSync(run.data, join(run.dir, "moved.txt"));
    renameSync(run.data.replace(/\.txt$/, ".trace"), join(run.dir, "moved.trace"));
    expect(await main(args)).toBe(2);
    expect(io.err).toContain(`bad input: ${run.data}: run ${run.runId}'s data file is not there; exports rebuild each prompt from it (give its path with --data)`);
    expect(await main([...args, "--data", join(run.dir, "moved.txt")])).toBe(0);
    expect(readFileSync(out, "utf8").trimEnd().split("\n")).toHaveLength(12);

    // A data file whose questions changed since the run (its trace goes: the trace's question types
    // must match the questions, and would name the change first).
    const moved = join(run.dir, "moved.txt");
    rmSync(join(run.dir, "moved.trace"));
    writeFileSync(moved, readFileSync(moved, "utf8").replace(/Where is the (\w+) really\?/, "Where was the $1 at the beginning?"));
    expect(await main([...args, "--data", moved, "--out", join(run.dir, "y.jsonl")])).toBe(2);
    expect(io.err).toMatch(/question differs from the one logged on line \d+ of run .*: the file changed since the run/);

    // A damaged line in the middle of the log.
    const store = await RunStore.open(run.store);
    const path = store.episodesPath(store.get(run.runId)!);
    const lines = readFileSync(path, "utf8").split("\n");
    lines[3] = lines[3]!.slice(0, 20);
    writeFileSync(path, lines.join("\n"));
    expect(await main([...args, "--data", moved])).toBe(2);
    expect(io.err).toContain(`bad input: ${path}:4: not valid JSON`);

    expect(await main(["export", "--run", "nope", "--format", "chat", "--out", out, "--store", run.store])).toBe(2);
    expect(io.err).toContain('--run: no run "nope"');
    expect(await main(["export", "--run", run.runId, "--format", "csv", "--out", out, "--store", run.store])).toBe(2);
    expect(io.err).toContain("--format: expected one of verl, sft, chat, sap");
  });

  it("logs unknown kinds as skipped and exports the rest", async () => {
    const run = await benchRun("tomi", 6, 9);
    const store = await RunStore.open(run.store);
    appendFileSync(store.episodesPath(store.get(run.runId)!), JSON.stringify({ kind: "live_chat", text: "hi" }) + "\n");
    expect(await main(["export", "--run", run.runId, "--format", "chat", "--out", join(run.dir, "c.jsonl"), "--store", run.store])).toBe(0);
    expect(io.err).toContain('skipped 1 records of unknown kind "live_chat"');
    expect(io.out).toContain("6 examples (chat, official labels)");
  });
});
