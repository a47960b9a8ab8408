/**
 * The benchmark room: an agent's run gives the same report as `socialworld bench` on the same
 * file, with its progress streamed on socket.io; a person in the respondent's seat answers
 * question by question and the run is a human baseline in the same report format.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { TomiBenchmark } from "../../worlds/tomi/benchmark.js";
import { main } from "../../cli/main.js";
import { decodeFrames } from "./wire.js";
import { collect, framesOf, startTestServer, until, type TestServer, listenToProgress, type ProgressListener } from "./harness.js";

let ts: TestServer;
let progress: ProgressListener;
let events: ProgressListener["events"];
beforeAll(async () => {
  ts = await startTestServer();
  progress = await listenToProgress(ts);
  events = progress.events;
});
afterAll(async () => {
  progress.close();
  await ts.close();
});

async function runOf(runId: string) {
  let res: any;
  await until(async () => {
    res = await ts.api(`/api/runs/${runId}`);
    return res.json.run.status !== "running";
  }, 20_000, "the run to end");
  return res.json;
}

/** Only the fields that do not depend on when, where and under which run id. */
function comparable(report: any) {
  const { runId, data, startedAt, finishedAt, durationMs, ...rest } = report;
  void runId, data, startedAt, finishedAt, durationMs;
  return rest;
}

describe("benchmark room", () => {
  let out = "";
  beforeEach(() => {
    vi.spyOn(process.stdout, "write").mockImplementation((s) => ((out += String(s)), true));
  });
  afterEach(() => vi.restoreAllMocks());

  it("runs an agent on a generated set: the report is `bench`'s, and progress streams on /progress", async () => {
    const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "benchmark", options: { benchmark: "tomi", generate: { n: 18, seed: 9 }, agent: "simulation" } } });
    expect(res.status, res.text).toBe(201);
    const spectator = await ts.join(res.json.roomId);
    const { run, report } = await runOf(res.json.runId);
    expect(run).toMatchObject({ kind: "bench", status: "done", summary: { total: 18 } });
    expect(report).toMatchObject({ benchmark: "tomi", agent: "simulation", mode: "vanilla", total: 18, runId: run.id });

    // The same file through the command line gives the same report.
    const file = join(ts.store, "generated", "tomi-n18-seed9.txt");
    const dir = mkdtempSync(join(tmpdir(), "sw-bench-"));
    expect(await main(["bench", "tomi", "--data", file, "--agent", "simulation", "--json", join(dir, "r.json"), "--store", join(dir, "store"), "--quiet"])).toBe(0);
    const cli = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    expect(comparable(report)).toEqual(comparable(cli));

    // Progress: one event per question, then the summary.
    await until(() => events.some((e) => e.type === "finished" && e.event.runId === run.id), 5000, "the finished event");
    const mine = events.filter((e) => e.event.runId === run.id);
    const progress = mine.filter((e) => e.type === "progress").map((e) => e.event);
    expect(progress.map((p) => p.done)).toEqual(Array.from({ length: 18 }, (_, i) => i + 1));
    expect(progress[17]).toMatchObject({ kind: "benchmark", total: 18, correct: report.correct, accuracy: report.accuracy });
    expect(mine.at(-1)!.event).toMatchObject({ status: "done", report: { total: 18, correct: report.correct } });

    // The room's public score table says the same.
    await until(() => (decodeFrames(framesOf(spectator)).state as any)?.progress?.finished === true, 5000, "the final state");
    const p = (decodeFrames(framesOf(spectator)).state as any).progress;
    expect(p).toMatchObject({ total: 18, done: 18, correct: report.correct, finished: true });
    for (const [type, stat] of Object.entries(report.byType as Record<string, { total: number; correct: number }>)) {
      expect(p.byType[type]).toMatchObject({ type, total: stat.total, correct: stat.correct });
    }
  });

  it("runs the random baseline as `bench` does (it failed every question in rooms: no actions were listed for it)", async () => {
    const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "benchmark", options: { benchmark: "tomi", generate: { n: 12, seed: 3 }, agent: "random:1" } } });
    expect(res.status, res.text).toBe(201);
    const { report } = await runOf(res.json.runId);
    expect(report).toMatchObject({ agent: "random:1", total: 12, errors: { count: 0 } });
    const dir = mkdtempSync(join(tmpdir(), "sw-bench-"));
    const file = join(ts.store, "generated", "tomi-n12-seed3.txt");
    expect(await main(["bench", "tomi", "--data", file, "--agent", "random:1", "--json", join(dir, "r.json"), "--store", join(dir, "store"), "--quiet"])).toBe(0);
    expect(comparable(report)).toEqual(comparable(JSON.parse(readFileSync(join(dir, "r.json"), "utf8"))));
  });

  it("records a human baseline: a person answers in the respondent's seat", async () => {
    const res = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "benchmark", options: { benchmark: "tomi", generate: { n: 6, seed: 4 }, agent: "human", participant: "alice" } },
    });
    expect(res.status, res.text).toBe(201);
    const roomId = res.json.roomId;
    await until(async () => (await ts.api(`/api/rooms/${roomId}`)).json.status === "waiting", 5000, "the room to wait for a person");

    // While the person answers, the run's log (labels, the stories' world-model episodes) is not public.
    expect((await ts.api(`/api/runs/${res.json.runId}/episodes`)).status).toBe(403);
    expect((await ts.api(`/api/runs/${res.json.runId}/episodes`, { admin: true })).status).toBe(200);
    const room = await ts.join(roomId, { seat: "respondent", name: "alice" });
    const turns = collect<{ timestep: number; observation: { text: string; data: { question: string; candidates: string[] } }; options: { answer: string }[]; actionSchema: unknown }>(room, "turn");
    const results = collect<{ ok: boolean; error?: string }>(room, "action_result");
    const given: string[] = [];
    for (let q = 1; q <= 6; q++) {
      await until(() => turns.length >= q, 10_000, `question ${q}`);
      const turn = turns[q - 1]!;
      expect(turn.timestep).toBe(q);
      expect(turn.observation.text).toContain(turn.observation.data.question);
      expect(turn.actionSchema).toMatchObject({ type: "object", properties: { answer: { type: "string" } } });
      if (q === 1) {
        room.send("act", { action: { answer: 42 } });
        await until(() => results.length === 1, 5000, "the refusal");
        expect(results[0]!.ok).toBe(false);
        expect(results[0]!.error).toMatch(/^invalid action: .*answer/);
        // An empty answer, and one that is no container of the story, are refused with the reason
        // (not scored wrong without a word); the person answers again.
        const candidates = turn.observation.data.candidates;
        room.send("act", { action: { answer: "  " }, timestep: 1 });
        room.send("act", { action: { answer: "the_moon" }, timestep: 1 });
        await until(() => results.length === 3, 5000, "the two refusals");
        expect(results[1]).toMatchObject({ ok: false, error: `the answer is empty: choose one of ${candidates.join(", ")}` });
        expect(results[2]).toMatchObject({ ok: false, error: `"the_moon" is not one of the answers this question takes: ${candidates.join(", ")}` });
      }
      // Alternate between the first and the last candidate: some right, some wrong.
      const options = turn.options.map((o) => o.answer);
      const answer = q % 2 ? options[0]! : options[options.length - 1]!;
      given.push(answer);
      room.send("act", { action: { answer }, timestep: q });
    }
    const { run, report } = await runOf(res.json.runId);
    expect(run.status).toBe("done");
    expect(report).toMatchObject({ agent: "human:alice", total: 6, errors: { count: 0 } });

    // Scored by the benchmark's own rule on the answers given.
    const bench = new TomiBenchmark();
    const items = bench.load(join(ts.store, "generated", "tomi-n6-seed4.txt"));
    const correct = items.filter((item, i) => bench.judge(item, given[i]!).correct).length;
    expect(report.correct).toBe(correct);
    const log = await ts.api(`/api/runs/${run.id}/episodes?limit=10`);
    expect(log.json.episodes.map((e: any) => e.result.answer)).toEqual(given);
    expect(log.json.episodes[0].turns[0].info).toMatchObject({ person: "alice" });
    // Each log line names the baseline as the report does (it said "none").
    expect(log.json.episodes.map((e: any) => e.agent)).toEqual(given.map(() => "human:alice"));
  });

  it("counts a question the person lets time run out on as unanswered, as `bench --timeout` does", async () => {
    const res = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      body: { type: "benchmark", options: { benchmark: "tomi", generate: { n: 2, seed: 5 }, agent: "human", turnDeadlineMs: 1000 } },
    });
    const room = await ts.join(res.json.roomId, { seat: "respondent" });
    const turns = collect<{ timestep: number; options: { answer: string }[] }>(room, "turn");
    const over = collect<{ timestep: number; outcome: string }>(room, "turn_over");
    await until(() => over.some((o) => o.timestep === 1 && o.outcome === "timeout"), 5000, "the first question to time out");
    await until(() => turns.some((t) => t.timestep === 2), 5000, "the second question");
    room.send("act", { action: { answer: turns.find((t) => t.timestep === 2)!.options[0]!.answer }, timestep: 2 });
    const { report } = await runOf(res.json.runId);
    expect(report).toMatchObject({ agent: "human", total: 2, errors: { count: 1 } });
    expect(report.errors.examples[0].error).toMatch(/timeout after 1000 ms/);
    expect(report.errors.examples[0].failure).toBe("timeout");
  });
});
