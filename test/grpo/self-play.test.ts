/**
 * Self-play in the live server: a looping ToMi room whose seats a policy plays, with a schedule
 * (every 2 episodes) trains that policy with GRPO on the room's episodes, writes the round's
 * checkpoint, and plays it from the next episode on, while a spectator stays connected; the round's
 * metrics reach the training board (REST) and the socket.io progress stream. A `train grpo --server`
 * run elsewhere posts its metrics through the admin API.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MetricsPublisher } from "../../trainers/grpo/publisher.js";
import { framesOf, startTestServer, until, ADMIN, type TestServer, listenToProgress, type ProgressListener } from "../server/harness.js";
import { tinyCheckpoint } from "../policy/fixtures.js";
import { heldOutQuestions, questionSetOf, scoreHeldOut } from "../../server/self-play/held-out.js";
import { wilsonInterval } from "../../benchmarks/wilson-interval.js";
import { loadBenchmark } from "../../worlds/registry.js";

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

/** A looping ToMi room whose seats `spec` plays, on the self-play schedule `selfPlay`. */
function selfPlayRoom(spec: string, seed: number, selfPlay: Record<string, unknown>, more: Record<string, unknown> = {}) {
  const options = { world: "tomi", seed, defaultAgent: spec, loop: true, tickMs: 0, pauseMs: 0, turnDeadlineMs: 20_000, title: "self-play", selfPlay, ...more };
  return ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options } });
}

describe("self-play", () => {
  it("trains the room's policy on its episodes and swaps it in between episodes without dropping the spectator", async () => {
    const { dir } = await tinyCheckpoint(21);
    const spec = `policy:${dir}?max_new_tokens=12&temperature=0.7`;
    const res = await selfPlayRoom(spec, 3, { everyEpisodes: 2, trainer: { steps: 2, prompts: 6, groupSize: 2, maxNewTokens: 16, lr: 1e-3, klCoef: 0.01 } }, { quiz: { questions: 2, deadlineMs: 20_000 } });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    const spectator = await ts.join(roomId);
    let dropped = false;
    spectator.onLeave(() => (dropped = true));

    // The round runs and finishes; the board has its steps.
    let run: any;
    await until(async () => {
      const t = await ts.api("/api/training");
      run = t.json.runs.find((r: any) => r.round === 1 && r.status === "done");
      return run !== undefined;
    }, 60_000, "the first self-play round");
    expect(run.history.map((m: any) => m.step)).toEqual([1, 2]);
    expect(run.roomIds).toContain(roomId);
    expect(run.title).toBe(`Self-play ${roomId}: round 1`);
    const round1 = join(ts.store, "selfplay", roomId, "round-1");
    expect(run.checkpoint).toBe(round1);
    for (const f of ["model.safetensors", "config.json", "tokenizer.json", "reference/model.safetensors"]) expect(existsSync(join(round1, f)), f).toBe(true);

    // The round is a store run with its rollouts, and its metrics went out on socket.io.
    const stored = await ts.api(`/api/runs/${run.runId}`);
    expect(stored.json.run).toMatchObject({ kind: "grpo", status: "done" });

    // Its points came from the round's own episodes (the first two): their quiz questions, rewarded
    // by exact match with the world model's label, and the policy's turns, rewarded by validity
    // alone (ToMi pays no reward of its own): nothing for doing what the story's script did.
    const rollouts = (await ts.api(`/api/runs/${run.runId}/episodes?limit=100`)).json.episodes as any[];
    const questions = rollouts.filter((r) => r.kind === "benchmark_item");
    const turns = rollouts.filter((r) => r.kind === "room_episode");
    expect(questions.length + turns.length).toBe(rollouts.length);
    expect(questions.length).toBeGreaterThan(0);
    const roomRun = (await ts.api(`/api/rooms/${roomId}`)).json.runId as string;
    for (const q of questions) {
      expect(q.result.file).toMatch(new RegExp(`runs/${roomRun}/quiz/episode-[12]\\.txt$`));
      const { format, overlong } = q.turns[0].info.rewardParts;
      expect(q.turns[0].reward - overlong).toBeCloseTo(q.result.correct ? 1 : format ? 0 : -1, 9);
    }
    for (const t of turns) for (const turn of t.turns) expect(turn.reward - turn.info.rewardParts.overlong).toBeCloseTo(turn.info.rewardParts.format ? 1 : -1, 9);
    // The quiz accuracy of the starting policy (round 0) on the episodes it played is on the board.
    expect(run.quizAccuracy[0]).toMatchObject({ round: 0, episodes: expect.any(Number), questions: expect.any(Number) });
    expect(run.quizAccuracy[0].episodes).toBeGreaterThanOrEqual(2);
    expect(events.filter((e) => e.type === "progress" && e.event.kind === "trainer" && e.event.runId === run.runId).map((e) => e.event.metrics.step)).toEqual([1, 2]);
    expect(events.some((e) => e.type === "finished" && e.event.runId === run.runId && e.event.checkpoint === round1)).toBe(true);

    // The next episode plays round 1: the seats' controller says so, and the spectator is still there.
    const swapped = `policy:${round1}?max_new_tokens=12&temperature=0.7`;
    await until(async () => (await ts.api(`/api/rooms/${roomId}`)).json.seats.every((s: any) => s.controller === swapped), 60_000, "the swap");
    const before = framesOf(spectator).length;
    await until(() => framesOf(spectator).length > before + 3, 20_000, "patches after the swap");
    expect(dropped).toBe(false);
    // Round 1's policy answers the quizzes of the episodes it plays (new to it): its point joins the curve, live too.
    // (on the pool's latest round's run: round 2 may have started meanwhile).
    const pooled = async () => (await ts.api("/api/training")).json.runs.filter((r: any) => r.title.startsWith(`Self-play ${roomId}:`));
    await until(async () => (await pooled()).some((r: any) => r.quizAccuracy?.some((q: any) => q.round === 1)), 60_000, "round 1's quiz accuracy");
    // The stream's event may reach this client a moment after the board has it.
    await until(() => events.some((e) => e.event.kind === "trainer" && e.event.quizAccuracy?.some((q: any) => q.round === 1)), 10_000, "round 1's quiz accuracy on the stream");
    await spectator.leave();
    expect((await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true })).status).toBe(200);
  });

  it("holds out the first quizzed episodes: no round trains on them, and every round is scored on their questions", async () => {
    const { dir } = await tinyCheckpoint(24);
    const spec = `policy:${dir}?max_new_tokens=8&temperature=1&answer_temperature=0`;
    const held: any[] = [];
    progress.socket.on("held_out_accuracy", (e: any) => held.push(e));
    const res = await selfPlayRoom(spec, 6, { everyEpisodes: 1, heldOutEpisodes: 2, turns: false, trainer: { steps: 1, prompts: 2, groupSize: 2, maxNewTokens: 8, lr: 1e-3 } }, { quiz: { questions: 2, deadlineMs: 20_000 } });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    const pooled = async () => (await ts.api("/api/training")).json.runs.filter((r: any) => r.title.startsWith(`Self-play ${roomId}:`));
    let latest: any;
    await until(async () => {
      latest = (await pooled()).find((r: any) => r.heldOutAccuracy?.some((p: any) => p.round === 2));
      return latest !== undefined;
    }, 120_000, "round 2's held-out score");
    const runs = await pooled();

    // The held-out episodes are the first two the room quizzed: their quiz files are in no round's sources.
    const roomRun = (await ts.api(`/api/rooms/${roomId}`)).json.runId as string;
    const quizDir = join(ts.store, "runs", roomRun, "quiz");
    const files = readdirSync(quizDir)
      .filter((f) => f.endsWith(".txt"))
      .sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0]))
      .map((f) => join(quizDir, f));
    const heldOut = files.slice(0, 2);
    // The store names them by their path in it.
    const inStore = (f: string) => relative(ts.store, f);
    const trainedOn: string[] = [];
    for (const r of runs.filter((x: any) => x.round === 1 || x.round === 2)) {
      const stored = (await ts.api(`/api/runs/${r.runId}`, { admin: true })).json.run;
      trainedOn.push(...stored.params.sources.map((s: any) => s.data));
    }
    expect(trainedOn.length).toBeGreaterThan(0);
    expect(trainedOn.filter((f) => !files.map(inStore).includes(f)), "the rounds' sources are the room's quiz files").toEqual([]);
    expect(trainedOn.filter((f) => heldOut.map(inStore).includes(f)), "trained on held-out episodes").toEqual([]);

    // The starting policy (round 0) and every round, on the same questions: every distinct question of those two files.
    const series = latest.heldOutAccuracy as any[];
    expect(series.map((p) => p.round)).toEqual([0, 1, 2]);
    const questions = await heldOutQuestions(await loadBenchmark("tomi"), heldOut);
    for (const p of series) {
      expect(p).toMatchObject({ questions: questions.length, questionSet: questionSetOf(questions), accuracy: p.correct / questions.length, ...wilsonInterval(p.correct, questions.length) });
    }
    // Round 0 is the seats' own policy: the same score the spec gets on those files.
    expect(series[0].correct).toBe((await scoreHeldOut({ world: "tomi", files: heldOut, spec })).correct);
    // Live too: the stream carried the series.
    await until(() => held.some((e) => e.heldOutAccuracy?.some((p: any) => p.round === 2)), 10_000, "the held-out series on the stream");
    expect(events.some((e) => e.type === "progress" && e.event.heldOutAccuracy?.some((p: any) => p.round === 0))).toBe(true);
    expect((await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true })).status).toBe(200);
  });

  it("names a private room's id, and its rounds' checkpoints and rollouts, to the admin only", async () => {
    const { dir } = await tinyCheckpoint(23);
    const spec = `policy:${dir}?max_new_tokens=8&temperature=1`;
    const res = await selfPlayRoom(spec, 5, { everyEpisodes: 1, trainer: { steps: 1, prompts: 2, groupSize: 2, maxNewTokens: 16, lr: 1e-3 } }, { private: true, quiz: { questions: 1 } });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    let run: any;
    await until(async () => {
      run = (await ts.api("/api/training", { admin: true })).json.runs.find((r: any) => r.roomIds.includes(roomId) && r.status === "done");
      return run !== undefined;
    }, 60_000, "the private room's first round");
    expect(run.checkpoint).toContain(roomId);
    const shown = (await ts.api("/api/training")).json.runs.find((r: any) => r.runId === run.runId);
    expect(shown).toBeDefined();
    expect(shown.title).toBe("Self-play (a private room): round 1");
    expect(JSON.stringify(shown)).not.toContain(roomId);
    expect(JSON.stringify((await ts.api(`/api/training/${run.runId}`)).json)).not.toContain(roomId);
    // Not on the stream either, and the round's rollouts (the room's episodes) are the admin's to read.
    expect(JSON.stringify(events.filter((e) => e.event.runId === run.runId))).not.toContain(roomId);
    expect((await ts.api(`/api/runs/${run.runId}`)).status).toBe(404);
    expect((await ts.api(`/api/runs/${run.runId}`, { admin: true })).status).toBe(200);
    expect((await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true })).status).toBe(200);
  });

  it("refuses a schedule without a policy to train, or without a period, or settings that cannot work", async () => {
    const bad = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", selfPlay: { everyEpisodes: 2 } } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("selfPlay: the seats must be played by one policy:DIR agent to train (found none)");
    const noPeriod = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", selfPlay: {} } } });
    expect(noPeriod.status).toBe(400);
    expect(noPeriod.json.error).toContain("selfPlay.everyEpisodes: give everyEpisodes or everyMinutes");
    const badTrainer = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", selfPlay: { everyEpisodes: 1, trainer: { clipLow: 3 } } } } });
    expect(badTrainer.status).toBe(400);
    expect(badTrainer.json.error).toContain("selfPlay.trainer.clipLow");
    const badLora = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", selfPlay: { everyEpisodes: 1, lora: "r=x" } } } });
    expect(badLora.status).toBe(400);
    expect(badLora.json.error).toContain("selfPlay.lora: r must be a number");
    const noQuiz = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", defaultAgent: "policy:/nowhere", selfPlay: { everyEpisodes: 1, heldOutEpisodes: 3 } } } });
    expect(noQuiz.status).toBe(400);
    expect(noQuiz.json.error).toContain("selfPlay.heldOutEpisodes: give the room a quiz too");
    // Continuing rounds decay over the updates of all of them, or not at all.
    const oneRoundDecay = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", selfPlay: { everyEpisodes: 1, continueTraining: true, trainer: { lr: 1e-4, minLr: 1e-5 } } } } });
    expect(oneRoundDecay.status).toBe(400);
    expect(oneRoundDecay.json.error).toContain("selfPlay.trainer.scheduleSteps: with continueTraining, a decaying learning rate (minLr) needs scheduleSteps");
  });

  it("with lora, makes each round an adapter of the base policy, continuing the previous round's", async () => {
    const { dir } = await tinyCheckpoint(22);
    const spec = `policy:${dir}?max_new_tokens=8&temperature=1.5`;
    const res = await selfPlayRoom(spec, 4, { everyEpisodes: 1, lora: "r=4,alpha=8,dropout=0", trainer: { steps: 1, prompts: 2, groupSize: 2, maxNewTokens: 16, lr: 1e-2, klCoef: 0.01, entropyCoef: 0.1 } });
    expect(res.status, res.text).toBe(201);
    const roomId: string = res.json.roomId;
    await until(async () => (await ts.api("/api/training")).json.runs.some((r: any) => r.title === `Self-play ${roomId}: round 2` && r.status === "done"), 90_000, "two LoRA rounds");
    const rounds = [1, 2].map((k) => join(ts.store, "selfplay", roomId, `round-${k}`));
    for (const r of rounds) {
      for (const f of ["adapter_config.json", "adapter_model.safetensors", "tokenizer.json"]) expect(existsSync(join(r, f)), `${r}/${f}`).toBe(true);
      for (const f of ["model.safetensors", "reference"]) expect(existsSync(join(r, f)), `${r}/${f}`).toBe(false);
      expect(JSON.parse(readFileSync(join(r, "adapter_config.json"), "utf8")).base_model_name_or_path).toBe(dir);
    }
    // Round 2 trained on: its adapter is not round 1's.
    const b = (r: string) => readFileSync(join(r, "adapter_model.safetensors"));
    expect(b(rounds[1]!)).not.toEqual(b(rounds[0]!));
    const swapped = `policy:${rounds[1]}?max_new_tokens=8&temperature=1.5`;
    await until(async () => (await ts.api(`/api/rooms/${roomId}`)).json.seats.every((s: any) => s.controller === swapped), 60_000, "the swap to round 2's adapter");
    expect((await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true })).status).toBe(200);
  });

  it("takes the metrics of a training run elsewhere (admin only) onto the board and the stream", async () => {
    const metrics = { step: 1, reward: 0.5, accuracy: 0.25, kl: 0.01, entropy: 1.2, clipFraction: 0.1, loss: -0.2, responseLength: 3 };
    const denied = await ts.api("/api/training/events", { method: "POST", body: { type: "progress", event: { runId: "cli-run", title: "t", steps: 4, metrics } } });
    expect(denied.status).toBe(401);
    const bad = await ts.api("/api/training/events", { method: "POST", admin: true, body: { type: "progress", event: { runId: "cli-run", title: "t", steps: 4, metrics: { ...metrics, reward: "high" } } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("event.metrics.reward");

    const notes: string[] = [];
    const p = new MetricsPublisher(ts.base, ADMIN, (m) => notes.push(m));
    p.publish({ runId: "cli-run", title: "GRPO /tmp/x", source: "ToMi", steps: 4, metrics: metrics as never });
    p.publish({ runId: "cli-run", title: "GRPO /tmp/x", source: "ToMi", steps: 4, metrics: { ...metrics, step: 2, reward: 0.75 } as never });
    await p.finish("cli-run", "done");
    expect(notes).toEqual([]);
    const got = await ts.api("/api/training/cli-run");
    expect(got.json).toMatchObject({ runId: "cli-run", status: "done", steps: 4, source: "ToMi" });
    expect(got.json.history.map((m: any) => m.reward)).toEqual([0.5, 0.75]);
    await until(() => events.some((e) => e.type === "finished" && e.event.runId === "cli-run"), 5000, "the finished event");

    // A server that is not there costs a note, never the run.
    const lost = new MetricsPublisher("http://127.0.0.1:9", ADMIN, (m) => notes.push(m));
    lost.publish({ runId: "x", title: "x", source: "", steps: 1, metrics: metrics as never });
    await lost.finish("x", "done");
    expect(notes.length).toBe(1);
    expect(notes[0]).toContain("could not publish metrics");
  });
});
