/**
 * The simulation room's quiz: at each episode's end every seat is asked its own questions about
 * the episode, scored, and logged with the run. Attacked on loopback: a seated client must not
 * receive another seat's questions or answers, nor any label before its quiz closes, nor read the
 * episode's minds off the run's log meanwhile; a spectator or another seat cannot answer for it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeFrames } from "./wire.js";
import { collect, framesOf, startTestServer, until, type TestServer } from "./harness.js";
import type { QuizMessage, QuizResultMessage } from "../../server/protocol.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

async function create(options: Record<string, unknown>): Promise<{ roomId: string; runId: string; agents: string[] }> {
  const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", tickMs: 0, ...options } } });
  expect(res.status, res.text).toBe(201);
  return { roomId: res.json.roomId, runId: res.json.runId, agents: res.json.seats.map((s: { agent: string }) => s.agent) };
}

async function page(runId: string, admin = true): Promise<{ episodes: any[]; indexes: number[] }> {
  const res = await ts.api(`/api/runs/${runId}/episodes?limit=100`, { admin });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

async function episodes(runId: string, admin = true): Promise<any[]> {
  return (await page(runId, admin)).episodes;
}

/** The run's log as the room wrote it (not as any client is shown it). */
function logFile(runId: string): any[] {
  return readFileSync(join(ts.store, "runs", runId, "episodes.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

describe("the quiz room option", () => {
  it("is validated: a world without questions, a type the world does not ask, a bad field", async () => {
    for (const [options, message] of [
      [{ world: "fantom", quiz: {} }, /quiz: the fantom world asks no questions/],
      [{ quiz: { types: ["order_2"] } }, /quiz.types: order_2 \(the tomi world asks first_order_tom/],
      [{ quiz: { questions: 0 } }, /quiz.questions/],
      [{ quiz: { deadline: 5 } }, /quiz: Unrecognized key/],
    ] as const) {
      const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "simulation", options: { world: "tomi", ...options } } });
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toMatch(message);
    }
  });

  it("asks every seat played by an agent, scores it, logs it after the episode, and shows the scores", async () => {
    const { roomId, runId, agents } = await create({ seed: 7, loop: true, pauseMs: 2000, maxSteps: 100, agents: {}, defaultAgent: "scripted", quiz: { questions: 3, deadlineMs: 5000 } });
    const spectator = await ts.join(roomId);
    await until(() => (decodeFrames(framesOf(spectator)).state as any)?.quiz?.length >= agents.length, 20_000, "the first episode's quiz scores");
    // The quiz opened (before any question went out), the episode's record, the quiz closed.
    const written = logFile(runId);
    expect(written[0]).toMatchObject({ kind: "room_quiz_open", episode: 1, deadline: expect.any(Number) });
    expect(written[1]).toMatchObject({ kind: "room_episode", episode: 1 });
    expect(written[2]).toMatchObject({ kind: "room_quiz", episode: 1, file: "quiz/episode-1.txt" });
    // The API lists the episode and its quiz, not the record that opened it, and says where each is in the log.
    const listed = await page(runId);
    const log = listed.episodes;
    expect(log.map((r) => r.kind)).not.toContain("room_quiz_open");
    expect(log.slice(0, 2).map((r) => r.kind)).toEqual(["room_episode", "room_quiz"]);
    expect(listed.indexes.slice(0, 2)).toEqual([1, 2]);
    const opening = await ts.api(`/api/runs/${runId}/episodes/0?format=record`, { admin: true });
    expect(opening.status).toBe(404);
    expect(opening.json.error).toMatch(/opens a quiz: it is not an episode/);
    log.unshift(written[0]);
    expect(existsSync(join(ts.store, "runs", runId, "quiz", "episode-1.txt"))).toBe(true);
    for (const agent of Object.keys(log[2].seats)) {
      const seat = log[2].seats[agent];
      // A scripted seat's questions go to the symbolic agent, which reads the story as the world model does.
      expect(seat).toMatchObject({ answeredBy: "simulation", asked: expect.any(Number) });
      expect(seat.correct).toBe(seat.asked);
      for (const q of seat.questions) expect(q.label).toBe(q.answer);
    }
    const state = decodeFrames(framesOf(spectator)).state as any;
    const first = state.quiz.filter((s: { episode: number }) => s.episode === 1);
    expect(first.map((s: { agent: string }) => s.agent).sort()).toEqual(Object.keys(log[2].seats).sort());
    // Public: who answered and how many right; never a question or a label.
    expect(Object.keys(first[0]).sort()).toEqual(["agent", "answeredBy", "asked", "correct", "episode"]);
    spectator.leave();
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });
  });

  it("sends each person its own questions only, no label before its quiz closes, and keeps the episode's minds off the log meanwhile", async () => {
    const { roomId, runId, agents } = await create({ seed: 9, humanSeats: [0, 1], tickMs: 400, turnDeadlineMs: 200, quiz: { questions: 3, deadlineMs: 4000 } });
    const [me, other] = agents as [string, string];
    const alice = await ts.join(roomId, { seat: me, name: "alice" });
    const bob = await ts.join(roomId, { seat: other, name: "bob" });
    const spectator = await ts.join(roomId);
    const aliceQuiz = collect<QuizMessage>(alice, "quiz");
    const aliceResults = collect<QuizResultMessage>(alice, "quiz_result");
    const aliceAcks = collect<{ ok: boolean; error?: string }>(alice, "quiz_answer_result");
    const bobQuiz = collect<QuizMessage>(bob, "quiz");
    const spectatorAcks = collect<{ ok: boolean; error?: string }>(spectator, "quiz_answer_result");
    await until(() => aliceQuiz.length > 0 && bobQuiz.length > 0, 30_000, "both quizzes");
    const quiz = aliceQuiz[0]!;
    expect(quiz.agent).toBe(me);
    expect(bobQuiz[0]!.agent).toBe(other);
    // No label in what a person is sent.
    for (const q of quiz.questions) expect(Object.keys(q).sort()).toEqual(["choices", "id", "question", "type"]);
    // The episode's record (every agent's mind) is in the log, but no client, the admin included
    // (its token may be in a quizzed person's hands), is shown it while the quiz is open: not in
    // the page, not as one episode, not through its audit.
    const logged = logFile(runId);
    const at = logged.findIndex((r) => r.kind === "room_episode");
    expect(logged[at]).toMatchObject({ episode: quiz.episode, socialized_context: expect.anything(), turns: expect.anything() });
    for (const admin of [false, true]) {
      const shown = await page(runId, admin);
      const record = shown.episodes[shown.indexes.indexOf(at)];
      expect(record).toMatchObject({ kind: "room_episode", episode: quiz.episode, withheld: expect.stringMatching(/quiz is open/) });
      expect(Object.keys(record).sort()).toEqual(["end", "episode", "kind", "room", "run", "withheld", "world"]);
      expect(JSON.stringify(shown)).not.toMatch(/socialized_context|believes|observation/);
      for (const path of [`/api/runs/${runId}/episodes/${at}`, `/api/runs/${runId}/episodes/${at}?format=record`, `/api/runs/${runId}/episodes/${at}/audit`]) {
        const res = await ts.api(path, { admin });
        expect(res.status, path).toBe(403);
        expect(res.json.error).toMatch(/readable when its quiz closes/);
      }
    }

    // Attacks: a spectator answers; alice answers bob's episode number, a question she was not asked, twice.
    spectator.send("quiz_answer", { episode: quiz.episode, id: 0, answer: "x" });
    alice.send("quiz_answer", { episode: quiz.episode + 1, id: 0, answer: "x" });
    alice.send("quiz_answer", { episode: quiz.episode, id: 99, answer: "x" });
    alice.send("quiz_answer", { episode: quiz.episode, id: 0, answer: "the moon" });
    alice.send("quiz_answer", { episode: quiz.episode, id: 0, answer: quiz.questions[0]!.choices![0]! });
    alice.send("quiz_answer", { episode: quiz.episode, id: 0, answer: "again" });
    alice.send("quiz_answer", { episode: quiz.episode, id: "0; drop", answer: 1 });
    await until(() => aliceAcks.length === 6 && spectatorAcks.length === 1, 5000, "the answers' results");
    expect(spectatorAcks[0]!.error).toMatch(/only a seated client/);
    expect(aliceAcks.map((a) => a.ok)).toEqual([false, false, false, true, false, false]);
    // An answer the question cannot take is refused with the answers it takes, and can be corrected.
    expect(aliceAcks[2]!.error).toBe(`"the moon" is not one of the answers this question takes: ${quiz.questions[0]!.choices!.join(", ")}`);
    expect(aliceAcks[4]!.error).toMatch(/already answered/);
    for (let id = 1; id < quiz.questions.length; id++) alice.send("quiz_answer", { episode: quiz.episode, id, answer: quiz.questions[id]!.choices![0]! });
    // Bob does not answer: his quiz closes at its deadline.
    await until(() => aliceResults.length > 0, 10_000, "alice's result");
    const result = aliceResults[0]!;
    expect(result).toMatchObject({ episode: quiz.episode, agent: me, asked: quiz.questions.length });
    expect(result.questions.every((q) => typeof q.label === "string" && q.answer === quiz.questions[q.id]!.choices![0])).toBe(true);
    await until(async () => (await episodes(runId)).some((r) => r.kind === "room_quiz"), 10_000, "the quiz record");
    const closed = await page(runId, false);
    const log = closed.episodes;
    // Closed: the episode's record is everyone's to read.
    expect(log[closed.indexes.indexOf(at)]).toMatchObject({ kind: "room_episode", episode: quiz.episode, socialized_context: expect.anything() });
    expect((await ts.api(`/api/runs/${runId}/episodes/${at}`)).status).toBe(200);
    const record = log.find((r) => r.kind === "room_quiz");
    expect(record.seats[me]).toMatchObject({ answeredBy: "human:alice", asked: quiz.questions.length });
    expect(record.seats[other]).toMatchObject({ answeredBy: "human:bob", correct: 0 });
    expect(record.seats[other].questions.every((q: { source: string }) => q.source === "timeout")).toBe(true);
    // Alice's client never received anything of bob's quiz: no quiz or result of his, nor his label texts.
    const quizMessages = decodeFrames(framesOf(alice)).messages.filter((m) => String(m.type).startsWith("quiz"));
    expect(quizMessages.length).toBeGreaterThanOrEqual(2);
    for (const m of quizMessages) if ((m.payload as { agent?: string }).agent !== undefined) expect((m.payload as { agent: string }).agent).toBe(me);
    alice.leave();
    bob.leave();
    spectator.leave();
  });
});
