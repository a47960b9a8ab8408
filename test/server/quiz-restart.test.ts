/**
 * A room's quiz and a server killed mid-quiz: the episode's record (every mind) is already in the
 * log, and a restarted server still keeps it from clients while that quiz may be open. The rule
 * itself (server/security/open-quizzes.ts) is checked on logs written here: closed, expired,
 * opened again, opened by this very server.
 */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openQuizEpisodes, quizOpenRecord } from "../../server/security/open-quizzes.js";
import { ADMIN, serve, simulationWithReservedSeat, type Served } from "./child-server.js";
import { connect, until } from "./raw-client.js";

async function api(s: Served, path: string, admin = false) {
  const res = await fetch(s.base + path, { headers: admin ? { authorization: `Bearer ${ADMIN}` } : {} });
  return { status: res.status, json: (await res.json()) as any };
}

const logLines = (s: Served, runId: string) =>
  readFileSync(join(s.store, "runs", runId, "episodes.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { kind: string; episode?: number; socialized_context?: unknown });

describe("which quizzes are open, from the log", () => {
  const log = (lines: unknown[]) => {
    const path = join(mkdtempSync(join(tmpdir(), "sw-quizlog-")), "episodes.jsonl");
    writeFileSync(path, lines.map((l) => JSON.stringify(l) + "\n").join(""));
    return path;
  };
  const episode = (n: number) => ({ kind: "room_episode", episode: n, socialized_context: { note: '{"kind":"room_quiz_open","episode":9}' } });
  const other = (n: number, deadline: number) => ({ kind: "room_quiz_open", run: null, room: "r", episode: n, deadline, server: "another-server" });

  it("opens with room_quiz_open, closes with room_quiz; another server's open quiz until its deadline or while its episode is played again", () => {
    const now = 1_000_000;
    const path = log([other(1, now - 1), episode(1), { kind: "room_quiz", episode: 1 }, other(2, now + 5000), episode(2), other(3, now - 1), episode(3)]);
    expect([...openQuizEpisodes(path, { now })]).toEqual([2]);
    expect([...openQuizEpisodes(path, { now: now + 5000 })]).toEqual([]);
    expect([...openQuizEpisodes(path, { now: now + 5000, liveEpisode: 3 })]).toEqual([3]);
    // Opened again (the episode replayed after a restart) and closed: closed.
    appendFileSync(path, JSON.stringify(other(3, now + 1)) + "\n" + JSON.stringify({ kind: "room_quiz", episode: 3 }) + "\n");
    expect([...openQuizEpisodes(path, { now, liveEpisode: 3 })]).toEqual([2]);
    // A torn last line opens nothing; no log, nothing open.
    appendFileSync(path, JSON.stringify(other(4, now + 1)).slice(0, 30));
    expect([...openQuizEpisodes(path, { now })]).toEqual([2]);
    expect(openQuizEpisodes(join(tmpdir(), "no-such-log.jsonl")).size).toBe(0);
    // The log read so far is remembered; one rewritten shorter is read again from the start.
    writeFileSync(path, JSON.stringify(other(5, now + 1)) + "\n");
    expect([...openQuizEpisodes(path, { now })]).toEqual([5]);
  });

  it("keeps this server's own open quiz open past its deadline (its agents may still be answering)", () => {
    const path = log([quizOpenRecord({ run: null, room: "r", episode: 1, deadline: 5 }), episode(1)]);
    expect([...openQuizEpisodes(path, { now: 10_000 })]).toEqual([1]);
  });
});

describe("a server killed with kill -9 mid-quiz", () => {
  it("has the episode's record in its log, and after the restart still shows clients none of it while the quiz may be open", async () => {
    const first = await serve();
    const { roomId, runId, url } = await simulationWithReservedSeat(
      first.base,
      { world: "tomi", seed: 4, humanSeats: [0], tickMs: 800, turnDeadlineMs: 200, quiz: { questions: 2, deadlineMs: 120_000 } },
      "mallory",
    );
    const person = connect(url);
    await until(() => person.seen.token !== "", 10_000, "the person's join");
    // The person lets every turn time out and does not answer the quiz: it stays open.
    await until(async () => (await api(first, `/api/rooms/${roomId}`)).json.status === "quiz", 30_000, "the quiz");

    // The attacker, seated, reads the runs API: the episode is there, its minds are not.
    const duringPage = (await api(first, `/api/runs/${runId}/episodes?limit=100`)).json as { episodes: any[]; indexes: number[] };
    const during = duringPage.episodes;
    // The record that opened the quiz is not listed: the episode is the first listed, the log's second record.
    expect(during.map((r) => r.kind)).toEqual(["room_episode"]);
    const at = duringPage.indexes[0]!;
    expect(at).toBe(1);
    expect(during[0]).toMatchObject({ episode: 1, withheld: expect.stringMatching(/quiz is open/) });
    expect(JSON.stringify(during)).not.toMatch(/socialized_context|"turns"/);
    expect((await api(first, `/api/runs/${runId}/episodes/${at}`)).status).toBe(403);

    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    // Nothing lost: the episode's record is in the log, after the record that opened its quiz.
    const lines = logLines(first, runId);
    expect(lines.map((l) => l.kind)).toEqual(["room_quiz_open", "room_episode"]);
    expect(lines[1]!.socialized_context).toBeDefined();

    const second = await serve(first.store);
    await until(() => /rooms? of the last run restored/.test(second.out()), 10_000, "the restore");
    const after = (await api(second, `/api/runs/${runId}/episodes?limit=100`)).json.episodes as any[];
    expect(after[0]).toMatchObject({ episode: 1, withheld: expect.stringMatching(/quiz is open/) });
    expect(JSON.stringify(after)).not.toMatch(/socialized_context|"turns"/);
    for (const path of [`/api/runs/${runId}/episodes/${at}`, `/api/runs/${runId}/episodes/${at}/audit`]) expect((await api(second, path)).status, path).toBe(403);
    // Not the admin either while the quiz may be open: its token may be the quizzed person's.
    expect((await api(second, `/api/runs/${runId}/episodes/${at}`, true)).status).toBe(403);
    expect(JSON.stringify((await api(second, `/api/runs/${runId}/episodes?limit=100`, true)).json)).not.toMatch(/socialized_context|"turns"/);
    person.ws.close();
  });
});
