/**
 * The REST API: health and catalog, admin rules, option and path validation, request limits,
 * runs and their episodes; and what the rooms log is the world model's own episode (the room's
 * ToMi and Hi-ToM episodes equal the worlds' replays of the same generated stories, byte for byte).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { main } from "../../cli/main.js";
import { BenchmarkOptionsSchema, SimulationOptionsSchema } from "../../server/rooms/options.js";
import { RunStore } from "../../store/run-store.js";
import { Rng } from "../../worlds/core/rng.js";
import { serializeSocializedContext, validateSocializedContext } from "../../worlds/core/socialized-context.js";
import { generateHitomStory } from "../../worlds/hitom/generator.js";
import { replayHitom } from "../../worlds/hitom/replay.js";
import { renderSentence as renderHitom } from "../../worlds/hitom/sentences.js";
import { buildHitomScenario, locateIn } from "../../worlds/hitom/story.js";
import { generateTomiStory } from "../../worlds/tomi/generator.js";
import { replayTomi } from "../../worlds/tomi/replay.js";
import { renderSentence } from "../../worlds/tomi/sentences.js";
import { buildScenario } from "../../worlds/tomi/story.js";
import { ADMIN, startTestServer, until, type TestServer } from "./harness.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

const create = (type: string, options: unknown, admin: boolean | string = true) =>
  ts.api("/api/rooms", { method: "POST", admin, body: { type, options } });

async function finished(roomId: string): Promise<{ runId: string }> {
  let summary: any;
  await until(async () => {
    summary = (await ts.api(`/api/rooms/${roomId}`, { admin: true })).json;
    return summary.status === "finished";
  }, 20_000, `room ${roomId} to finish`);
  return summary;
}

describe("REST API", () => {
  it("answers health and the catalog", async () => {
    const health = await ts.api("/api/health");
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ ok: true, rooms: 0 });
    const catalog = await ts.api("/api/catalog");
    expect(catalog.json.worlds.map((w: { name: string }) => w.name)).toEqual(expect.arrayContaining(["tomi", "hitom"]));
    expect(catalog.json.benchmarks).toContain("tomi");
  });

  it("needs the admin token to create or stop rooms", async () => {
    expect((await create("simulation", { world: "tomi" }, false)).status).toBe(401);
    const wrong = await create("simulation", { world: "tomi" }, "x".repeat(27));
    expect(wrong.status).toBe(403);
    expect(wrong.json.error).toBe("wrong admin token");
    expect((await ts.api("/api/rooms/abc", { method: "DELETE" })).status).toBe(401);
    // Rooms are never created through matchmaking.
    const mm = await fetch(`${ts.base}/matchmake/create/simulation`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(mm.ok).toBe(false);
    expect((await ts.api("/api/rooms")).json.rooms).toEqual([]);
  });

  it("refuses bad options, naming the field", async () => {
    const cases: [string, unknown, RegExp][] = [
      ["simulation", { world: "narnia" }, /world: expected one of tomi, hitom/],
      ["simulation", { world: "tomi", tickMs: -1 }, /tickMs: Too small/],
      ["simulation", { world: "tomi", agents: { Ella: "genius" } }, /agents\.Ella: .*unknown agent "genius"/],
      ["simulation", { world: "tomi", surprise: 1 }, /Unrecognized key: "surprise"/],
      ["benchmark", { benchmark: "tomi" }, /give exactly one of data/],
      ["benchmark", { benchmark: "tomi", generate: { n: 0 } }, /generate\.n: Too small/],
      ["benchmark", { benchmark: "fantom", generate: { n: 2 } }, /generate\.n: FANToM needs at least 3 questions/],
      // Seats must be the story's (a misspelt one used to leave no seat open).
      ["simulation", { world: "tomi", seed: 2, humanSeats: ["Nobody"] }, /humanSeats: no seat "Nobody" \(the story's agents: 0 /],
      ["simulation", { world: "tomi", seed: 2, humanSeats: [9] }, /humanSeats: no seat 9 /],
      ["simulation", { world: "tomi", seed: 2, agents: { Nobody: "none" } }, /agents\.Nobody: no such seat/],
      // As a key of the parsed record "__proto__" would be dropped unseen (JSON.parse makes it an own key).
      ["simulation", { world: "tomi", seed: 2, agents: JSON.parse('{"__proto__": "none"}') }, /agents\.__proto__: not a seat of this story/],
    ];
    for (const [type, options, message] of cases) {
      const res = await create(type, options);
      expect(res.status, JSON.stringify(options)).toBe(400);
      expect(res.json.error).toMatch(message);
    }
    const badType = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "casino" } });
    expect(badType.json.error).toMatch(/^bad body: type: /);
    const extra = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi" }, extra: 1 } });
    expect(extra.status).toBe(400);
    expect(extra.json.error).toMatch(/^bad body: .*Unrecognized key: "extra"/);
    // A position may be written as digits, as a join's `seat: "1"` is.
    const byDigits = await create("simulation", { world: "tomi", seed: 2, humanSeats: ["1"], tickMs: 60_000 });
    expect(byDigits.status, byDigits.text).toBe(201);
    expect(byDigits.json.seats.map((s: { human: boolean }) => s.human)).toEqual(byDigits.json.seats.map((_: unknown, i: number) => i === 1));
    await ts.api(`/api/rooms/${byDigits.json.roomId}`, { method: "DELETE", admin: true });
  });

  it("checks an agent spec by its shape, and loads the agent's model when the room starts", async () => {
    const missing = join(ts.store, "no-such-policy");
    // Validating the options reads no folder (it used to load the checkpoint).
    expect(BenchmarkOptionsSchema.safeParse({ benchmark: "tomi", generate: { n: 6 }, agent: `policy:${missing}` }).success).toBe(true);
    expect(SimulationOptionsSchema.safeParse({ world: "tomi", defaultAgent: `policy:${missing}?temperature=0.5` }).success).toBe(true);
    const shape = await create("benchmark", { benchmark: "tomi", generate: { n: 6 }, agent: "policy:?temperature=-1" });
    expect(shape.status).toBe(400);
    expect(shape.json.error).toMatch(/^bad benchmark options: agent: .*needs a checkpoint folder/);
    for (const [type, options] of [
      ["benchmark", { benchmark: "tomi", generate: { n: 6 }, agent: `policy:${missing}` }],
      ["simulation", { world: "tomi", defaultAgent: `policy:${missing}` }],
    ] as const) {
      const res = await create(type, options);
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toMatch(new RegExp(`^could not create the ${type} room: .*no-such-policy.*not a checkpoint folder`));
    }
    expect((await ts.api("/api/rooms", { admin: true })).json.rooms).toEqual([]);
  });

  it("refuses a policy told to write a context the world does not define, before a run exists (it failed every question)", async () => {
    const policy = join(ts.store, "tiny-policy");
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    expect(await main(["model", "init", "--preset", "tiny", "--out", policy, "--seed", "1"])).toBe(0);
    vi.restoreAllMocks();
    const runs = async () => (await RunStore.open(ts.store)).list().length;
    const before = await runs();
    for (const context of ["self", "self-latest"]) {
      const res = await create("benchmark", { benchmark: "fantom", generate: { n: 3, seed: 2 }, agent: `policy:${policy}?context=${context}`, mode: "simulation" });
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toContain(`agent: context=${context}: the fantom world has no written context`);
    }
    expect(await runs()).toBe(before);
    expect((await ts.api("/api/rooms", { admin: true })).json.rooms).toEqual([]);
    // In vanilla mode the option asks nothing of the world: the room runs.
    const vanilla = await create("benchmark", { benchmark: "fantom", generate: { n: 3, seed: 2 }, agent: `policy:${policy}?context=self`, mode: "vanilla" });
    expect(vanilla.status, vanilla.text).toBe(201);
    await finished(vanilla.json.roomId);
    await ts.api(`/api/rooms/${vanilla.json.roomId}`, { method: "DELETE", admin: true });
  });

  it("reads benchmark files only inside the data folders", async () => {
    for (const data of ["../../../../etc/passwd", "/etc/passwd", "nope.txt", "a\u0000b"]) {
      const res = await create("benchmark", { benchmark: "tomi", data });
      expect(res.status, data).toBe(400);
      expect(res.json.error).toMatch(/no file|NUL/);
    }
    // A bad file inside the folder: the reader's error names the file and line, and no room exists.
    writeFileSync(join(ts.dataRoot, "bad.txt"), "1 Ella entered the kitchen.\n2 Ella teleported to the garage.\n");
    // The client's mistake is answered, not printed as a stack trace in the server's log.
    const printed = vi.spyOn(console, "error");
    const res = await create("benchmark", { benchmark: "tomi", data: "bad.txt" });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/bad\.txt:2: /);
    expect(printed).not.toHaveBeenCalled();
    printed.mockRestore();
    expect((await ts.api("/api/rooms", { admin: true })).json.rooms).toEqual([]);
  });

  it("limits and checks request bodies", async () => {
    const big = await ts.api("/api/rooms", { method: "POST", admin: true, raw: JSON.stringify({ type: "simulation", options: { title: "x".repeat(70_000) } }) });
    expect(big.status).toBe(413);
    const broken = await ts.api("/api/rooms", { method: "POST", admin: true, raw: "{not json" });
    expect(broken.status).toBe(400);
    expect(broken.json.error).toBe("request body is not valid JSON");
    expect((await ts.api("/api/runs/..%2F..%2Fetc")).status).toBe(400);
    expect((await ts.api("/api/runs/no-such-run")).status).toBe(404);
    expect((await ts.api("/api/nothing")).status).toBe(404);
  });

  it("logs a ToMi room's episode as the world model's own replay of the story, and serves it page by page", async () => {
    const seed = 21;
    const res = await create("simulation", { world: "tomi", seed, tickMs: 0 });
    expect(res.status, res.text).toBe(201);
    const { runId } = await finished(res.json.roomId);

    const story = await generateTomiStory(Rng.seeded(`room:tomi:${seed}`));
    const sentences = story.sentences.map((sentence, i) => ({ sentence, text: renderSentence(sentence), line: i + 1 }));
    const replay = await replayTomi(buildScenario(sentences, "t"), "t");
    const expected = serializeSocializedContext(replay.context);

    const episode = await ts.api(`/api/runs/${runId}/episodes/0`);
    expect(episode.status).toBe(200);
    expect(episode.text).toBe(expected);
    expect(validateSocializedContext(episode.json)).toEqual([]);

    const page = await ts.api(`/api/runs/${runId}/episodes?offset=0&limit=5`);
    expect(page.json).toMatchObject({ total: 1, offset: 0, limit: 5, torn: false });
    expect(page.json.episodes[0]).toMatchObject({ kind: "room_episode", run: runId, world: "tomi", seed, end: "terminal" });
    expect((await ts.api(`/api/runs/${runId}/episodes/1`)).status).toBe(404);
    // A bad path parameter is named.
    const negative = await ts.api(`/api/runs/${runId}/episodes/-1`);
    expect(negative.status).toBe(400);
    expect(negative.json.error).toBe("bad path parameter index: Too small: expected number to be >=0");
    expect((await ts.api("/api/rooms/no%20such")).json.error).toBe("bad path parameter roomId: not a room id");
    // A segment the router cannot decode.
    const undecodable = await ts.api("/api/runs/%ZZ");
    expect(undecodable.status).toBe(400);
    expect(undecodable.json.error).toBe("bad path parameter: not valid percent-encoding: '%ZZ'");
    expect((await ts.api(`/api/runs/${runId}/episodes?limit=1000`)).status).toBe(400);

    const run = await ts.api(`/api/runs/${runId}`);
    expect(run.json.run).toMatchObject({ id: runId, kind: "room", status: "done", summary: { episodes: 1 } });
    const list = await ts.api("/api/runs");
    expect(list.json.runs.map((r: { id: string }) => r.id)).toContain(runId);
  });

  it("will not start a second server on a port in use, and says so in one line", async () => {
    const io = { err: "" };
    const write = vi.spyOn(process.stderr, "write").mockImplementation((t) => ((io.err += String(t)), true));
    try {
      expect(await main(["serve", "--port", String(ts.server.port), "--store", join(ts.store, "second"), "--no-demo"])).toBe(1);
    } finally {
      write.mockRestore();
    }
    const line = `socialworld serve: port ${ts.server.port} on 127.0.0.1 is in use (another server?); stop it, or choose a port with --port N (0 picks a free one)\n`;
    expect(io.err).toBe(line);
    expect((await ts.api("/api/health")).json).toMatchObject({ ok: true });
    // As a command of its own, it also ends (nothing it started keeps the process alive).
    const bin = join(import.meta.dirname, "..", "..", "bin", "socialworld.js");
    const child = spawnSync(process.execPath, [bin, "serve", "--port", String(ts.server.port), "--store", join(ts.store, "third"), "--no-demo"], { encoding: "utf8", timeout: 20_000 });
    expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 1, stderr: line });
  });

  it("says which line of a run's log is damaged, without the server's paths", async () => {
    const store = await RunStore.open(ts.store);
    const run = await store.create("bench", "damaged", {});
    writeFileSync(store.episodesPath(run), '{"kind": "benchmark_item"}\n{"kind": \n{"kind": "benchmark_item"}\n');
    // Pages read only their own lines: the damage shows on the pages that hold it.
    for (const url of [`/api/runs/${run.id}/episodes`, `/api/runs/${run.id}/episodes/1`]) {
      const res = await ts.api(url);
      expect(res.status).toBe(500);
      expect(res.json.error).toBe(`run ${run.id}: its episode log is damaged at line 2 (not valid JSON)`);
    }
  });

  it("logs a Hi-ToM room's episode as the world model's replay too", async () => {
    const seed = 5;
    const res = await create("simulation", { world: "hitom", seed, tickMs: 0 });
    expect(res.status, res.text).toBe(201);
    const { runId } = await finished(res.json.roomId);
    const rng = Rng.seeded(`room:hitom:${seed}`);
    const deception = rng.chance(0.5);
    const length = rng.pick([1, 2, 3] as const);
    const story = await generateHitomStory(rng, { deception, length });
    const sentences = story.sentences.map((sentence, i) => ({ sentence, text: renderHitom(sentence), line: i + 1 }));
    const locate = locateIn("t");
    const replay = await replayHitom(buildHitomScenario(sentences, locate), locate);
    expect((await ts.api(`/api/runs/${runId}/episodes/0`)).text).toBe(serializeSocializedContext(replay.context));
  });

  it("plays a FANToM conversation as the world model replays it, and knowledge spreads only to who heard it", async () => {
    const seed = 3;
    const res = await create("simulation", { world: "fantom", seed, tickMs: 0 });
    expect(res.status, res.text).toBe(201);
    const { runId } = await finished(res.json.roomId);
    const { generateConversation } = await import("../../worlds/fantom/generator.js");
    const { parseContext } = await import("../../worlds/fantom/conversation.js");
    const { locateByLanguage } = await import("../../worlds/fantom/locate.js");
    const { replayConversation } = await import("../../worlds/fantom/replay.js");
    const { sets } = generateConversation(Rng.seeded(`room:fantom:${seed}`), seed);
    const set = sets[sets.length - 1]!;
    const utterances = parseContext(set.full_context, "t", "full_context");
    const located = locateByLanguage(utterances, set.factQA.question)!;
    expect(located.lines.length).toBeGreaterThan(0);
    const replay = await replayConversation(utterances, {
      ...(set.joining_speaker !== undefined ? { joiningSpeaker: set.joining_speaker } : {}),
      facts: { missed: located.statement },
      factsByUtterance: new Map(located.lines.map((i) => [i, ["missed"]])),
    });
    const logged = await ts.api(`/api/runs/${runId}/episodes/0`);
    expect(logged.text).toBe(serializeSocializedContext(replay.context));
    // The character who missed the fact never gets a mental state saying they know it.
    const missed = set.joining_speaker!;
    const lines = (logged.json.socialized_context as { observations: string[] }[]).map((st) => st.observations.find((o) => o.startsWith(`${missed}:`))!);
    expect(lines.some((l) => l.includes("<mental_state>I know"))).toBe(set.missed_info_accessibility === "accessible");
  });

  it("stops a room: its run is interrupted and its episode logged", async () => {
    const res = await create("simulation", { world: "tomi", seed: 2, tickMs: 5000 });
    const roomId = res.json.roomId;
    const stop = await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: ADMIN });
    expect(stop.json).toEqual({ stopped: roomId });
    expect((await ts.api(`/api/rooms/${roomId}`, { admin: true })).status).toBe(404);
    const run = await ts.api(`/api/runs/${res.json.runId}`);
    expect(run.json.run.status).toBe("interrupted");
    const ep = await ts.api(`/api/runs/${res.json.runId}/episodes/0?format=record`);
    expect(ep.json).toMatchObject({ kind: "room_episode", end: "aborted" });
  });
});
