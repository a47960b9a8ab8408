/**
 * A client's WebSocket protocol error (a frame over the 64 KiB limit, invalid UTF-8) or a message
 * whose payload does not decode closes that client only, and prints nothing to the server's log:
 * it is the client's error, not the server's. A bad message is told to the client first.
 */
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN, startTestServer, type TestServer } from "./harness.js";
import { connect, until } from "./raw-client.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

/** A reserved place in the room, and the URL a raw client connects to it with. */
async function joinUrl(roomId: string): Promise<string> {
  const r = await t.api(`/matchmake/joinById/${roomId}`, { method: "POST", body: {} });
  return `${t.base.replace(/^http/, "ws")}/${r.json.processId}/${r.json.roomId}?sessionId=${r.json.sessionId}`;
}

async function rawSocket(roomId: string): Promise<WebSocket> {
  const ws = new WebSocket(await joinUrl(roomId));
  await new Promise((ok, fail) => {
    ws.once("open", ok);
    ws.once("error", fail);
  });
  return ws;
}

describe("WebSocket protocol errors", () => {
  it("close the client without a stack trace in the server's log", async () => {
    const created = await t.api("/api/rooms", { method: "POST", admin: ADMIN, body: { type: "simulation", options: { world: "tomi" } } });
    expect(created.status).toBe(201);
    const printed = vi.spyOn(console, "error");
    try {
      const big = await rawSocket(created.json.roomId);
      const bigClosed = new Promise<number>((ok) => big.once("close", ok));
      big.send(Buffer.alloc(70 * 1024, 1));
      expect(await bigClosed).toBe(1009);

      const utf8 = await rawSocket(created.json.roomId);
      const utf8Closed = new Promise<number>((ok) => utf8.once("close", ok));
      // A masked text frame whose payload is not UTF-8 (0xc3 0x28), with a zero mask.
      (utf8 as unknown as { _socket: { write(b: Buffer): void } })._socket.write(Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0xc3, 0x28]));
      expect(await utf8Closed).toBe(1007);

      // Frames whose msgpack payload does not decode (each once printed msgpackr's stack trace): an
      // array header cut short, bytes after the value, an unknown extension, a request cut short.
      const type = [0xa3, ...Buffer.from("act")];
      for (const frame of [
        [13, ...type, 0xdc, 0xff],
        [13, ...type, 0xc0, 0x01],
        [13, ...type, 0xd4, 0x24, 0x00],
        [21, 0x01, ...type, 0x92, 0x01],
      ]) {
        const bad = connect(await joinUrl(created.json.roomId));
        await until(() => bad.seen.token !== "", 10_000, "the join");
        bad.ws.send(Buffer.from(frame));
        await until(() => bad.seen.closed !== undefined, 10_000, "the close");
        expect(bad.seen.closed).toBe(4002);
        // ERROR: [11][4217: 0xcd and two bytes, little-endian in @colyseus/schema's encoding][the reason]
        expect([...Buffer.from(bad.seen.errors[0]!, "latin1").subarray(0, 3)]).toEqual([0xcd, 0x79, 0x10]);
        expect(bad.seen.errors[0]).toMatch(/malformed message: /);
      }

      await new Promise((r) => setTimeout(r, 200));
      const lines = printed.mock.calls.map((c) => c.map(String).join(" "));
      expect(lines.filter((l) => /\n\s+at /.test(l))).toEqual([]);
      expect((await t.api("/api/health")).json.ok).toBe(true);
    } finally {
      printed.mockRestore();
    }
  });
});
