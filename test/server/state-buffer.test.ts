/**
 * @colyseus/schema encodes a room's state into a buffer of Encoder.BUFFER_SIZE bytes and, when a
 * state is larger, grows it and prints a "buffer overflow ... increase BUFFER_SIZE" advice to the
 * server log. The buffer is sized for this project's rooms (server/rooms/state.ts): a benchmark
 * room holding its full history of questions, sent whole to a spectator who joins, stays inside it.
 */
import { Encoder } from "@colyseus/schema";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestServer, until, type TestServer } from "./harness.js";

let ts: TestServer;
beforeAll(async () => {
  ts = await startTestServer();
});
afterAll(() => ts.close());

/** The largest full state a spectator joining each finished room was sent, and what was printed. */
async function fullStateOf(options: Record<string, unknown>) {
  const warn = vi.spyOn(console, "warn");
  const proto = Encoder.prototype as unknown as { encodeFullSync: (it: { offset: number }, ...rest: unknown[]) => Uint8Array };
  const original = proto.encodeFullSync;
  let largest = 0;
  proto.encodeFullSync = function (it, ...rest) {
    const out = original.call(this, it, ...rest);
    largest = Math.max(largest, it.offset);
    return out;
  };
  try {
    const res = await ts.api("/api/rooms", { method: "POST", admin: true, body: { type: "benchmark", options } });
    expect(res.status, res.text).toBe(201);
    const roomId = res.json.roomId as string;
    await until(async () => (await ts.api(`/api/rooms/${roomId}`)).json.status === "finished", 60_000, "the room to finish");
    const room = await ts.join(roomId);
    await until(async () => largest > 0, 5_000, "the full state");
    await room.leave();
    return { largest, advice: warn.mock.calls.filter((c) => String(c[0]).includes("BUFFER_SIZE")) };
  } finally {
    proto.encodeFullSync = original;
    warn.mockRestore();
  }
}

describe("the state encoder's buffer", () => {
  it("holds a benchmark room's whole history (ToMi, Hi-ToM, FANToM) without the BUFFER_SIZE advice", async () => {
    for (const benchmark of ["tomi", "hitom", "fantom"]) {
      const { largest, advice } = await fullStateOf({ benchmark, generate: { n: 120, seed: 5 }, agent: "simulation", tickMs: 0 });
      expect(advice).toEqual([]);
      expect(largest).toBeLessThanOrEqual(Encoder.BUFFER_SIZE);
      // A room that small would not say anything about the buffer.
      expect(largest).toBeGreaterThan(16 * 1024);
    }
  });
});
