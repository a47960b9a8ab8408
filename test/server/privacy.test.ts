/**
 * A seated client never receives another agent's private observation or mental state, nor the
 * world's omniscient view: proved from the bytes its socket received, decoded independently of
 * the SDK, across episodes of a looping room (the seat moves to a new character at each). A
 * spectator in the same room is the positive control: the same decoding finds every perspective
 * in its bytes. Run for ToMi, Hi-ToM, FANToM's conversations and usersim's threads (the simulated
 * user's latent states).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesContain, decodeFrames } from "./wire.js";
import { framesOf, startTestServer, until, type TestServer } from "./harness.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(async () => {
  await ts.close();
});

// Hi-ToM: private messages reach one listener. FANToM: characters who leave the conversation miss what is said meanwhile (no pause between
// timesteps: its conversations are long).
const ROOMS = [
  { world: "tomi", options: { seed: 11, tickMs: 30, turnDeadlineMs: 200 } },
  { world: "hitom", options: { seed: 4, tickMs: 0, turnDeadlineMs: 200 } },
  { world: "fantom", options: { seed: 5, tickMs: 0, turnDeadlineMs: 200 } },
  // usersim: seat 0 is a participant of the thread; the simulated user's latent states (its mental
  // state) and its profile are the secrets, which spectators see.
  { world: "usersim", options: { seed: 2, tickMs: 0, turnDeadlineMs: 200 } },
] as const;

describe.each(ROOMS)("privacy of a seated client ($world)", ({ world, options }) => {
  it("receives only its own agent's perspective, in every episode, while a spectator receives all", async () => {
    const created = await ts.api("/api/rooms", {
      method: "POST",
      admin: true,
      // Private: its seat tokens name seats by position, so the client holds seat 0 whatever the
      // episode (and its characters) when it gets in; a name would go stale as the room loops.
      body: { type: "simulation", options: { world, ...options, humanSeats: "all", loop: true, pauseMs: 50, private: true } },
    });
    expect(created.status, created.text).toBe(201);
    const roomId: string = created.json.roomId;
    const seatToken: string = (created.json.seatTokens as { index: number; token: string }[]).find((t) => t.index === 0)!.token;

    const spectator = await ts.join(roomId, { token: created.json.spectatorToken as string });
    const spectatorFrames = framesOf(spectator);
    const seated = await ts.join(roomId, { token: seatToken, name: "tester" });
    const seatedFrames = framesOf(seated);

    // Until the seated client has lived through a whole episode after the one it joined in, has
    // steps of two of the seat's characters and has been offered a few turns. The room starts
    // before the clients join (with no pause between steps, a loaded machine can be several
    // episodes in by then), so every count starts from what the client itself received.
    let joinedIn: number | undefined;
    await until(
      () => {
        const d = decodeFrames(seatedFrames);
        const episode = d.state?.episode as number | undefined;
        if (episode === undefined) return false;
        joinedIn ??= episode;
        const withSteps = [...d.perspectives.values()].filter((p) => p.steps.length > 0).length;
        const turns = d.messages.filter((m) => m.type === "turn").length;
        return episode >= joinedIn + 2 && withSteps >= 2 && turns > 3;
      },
      60_000,
      "two more episodes, steps of two of the seat's characters, and four turns",
    );
    await ts.api(`/api/rooms/${roomId}`, { method: "DELETE", admin: true });

    const mine = decodeFrames(seatedFrames);
    const all = decodeFrames(spectatorFrames);

    // The agent in seat 0 of each episode the client saw (from the run's log: the agents' order).
    const runId = all.state!.runId as string;
    // (A private room's run is the admin's to read.)
    const log = await ts.api(`/api/runs/${runId}/episodes?limit=100`, { admin: true });
    const firstAgents = new Set<string>((log.json.episodes as { socialized_context: { agents_names: string[] } }[]).map((e) => e.socialized_context.agents_names[0]!));
    expect(log.json.total).toBeGreaterThanOrEqual(2);

    // Positive control: the spectator's bytes decode to every perspective, the world's included.
    expect(all.perspectivesEverSeen.has("world")).toBe(true);
    expect(all.perspectivesEverSeen.size).toBeGreaterThanOrEqual(1 + 2 * 2);

    // The seated client: no world view, and no perspective but its seat's agent of each episode.
    expect(mine.perspectivesEverSeen.has("world")).toBe(false);
    for (const name of mine.perspectivesEverSeen) expect(firstAgents.has(name), `received ${name}'s perspective`).toBe(true);
    expect(mine.perspectivesEverSeen.size).toBeGreaterThanOrEqual(2);
    // It did receive its own: whole episodes of observations and mental states.
    const withSteps = [...mine.perspectives.values()].filter((p) => p.steps.length > 0);
    expect(withSteps.length, JSON.stringify([...mine.perspectives.values()].map((p) => [p.name, p.steps.length]))).toBeGreaterThanOrEqual(2);

    // Every turn it was offered was its own.
    const turns = mine.messages.filter((m) => m.type === "turn").map((m) => m.payload as { agent: string });
    expect(turns.length).toBeGreaterThan(3);
    for (const t of turns) expect(firstAgents.has(t.agent)).toBe(true);

    // Byte level: every text only another agent (or the world view) had must be absent from its bytes.
    const ownTexts = new Set<string>();
    for (const p of mine.perspectives.values()) for (const s of p.steps) for (const x of [s.text, s.mentalState]) ownTexts.add(x);
    for (const m of mine.messages) if (m.type === "turn") {
      const t = m.payload as { observation: { text: string }; mentalState: string };
      ownTexts.add(t.observation.text);
      ownTexts.add(t.mentalState);
    }
    const forbidden = new Set<string>();
    for (const [name, p] of all.perspectives) {
      if (mine.perspectivesEverSeen.has(name)) continue;
      for (const s of p.steps) for (const x of [s.text, s.mentalState]) if (x.length >= 12 && !ownTexts.has(x)) forbidden.add(x);
    }
    // A text another agent saw that is part of one of the seat's own (it saw that event too) is not a secret.
    for (const x of [...forbidden]) if ([...ownTexts].some((own) => own.includes(x))) forbidden.delete(x);
    expect(forbidden.size).toBeGreaterThan(5);
    if (world === "usersim") expect([...forbidden].filter((x) => x.startsWith("Stance: ")).length).toBeGreaterThanOrEqual(2);
    for (const secret of forbidden) {
      expect(bytesContain(spectatorFrames, secret)).toBe(true);
      expect(bytesContain(seatedFrames, secret), `seated client received "${secret}"`).toBe(false);
    }
  });
});
