/**
 * Reconnection with the reconnection token, against a server in a process of its own: the test
 * harness defines a global WebSocket for its SDK clients, which hid that Node 20 has none and that
 * Colyseus needs one to take a client back (every reconnection failed and lost its seat).
 * Raw frames over `ws`, as any client in any language would send them (README, "Protocol").
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ADMIN = "reconnect-admin-token-0123456789";
let child: ChildProcess;
let base = "";

beforeAll(async () => {
  const bin = join(import.meta.dirname, "..", "..", "bin", "socialworld.js");
  const store = mkdtempSync(join(tmpdir(), "sw-reconnect-"));
  child = spawn(process.execPath, [bin, "serve", "--port", "0", "--store", store, "--no-demo", "--admin-token", ADMIN], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  base = await new Promise<string>((found, failed) => {
    child.stdout!.on("data", (d) => {
      out += String(d);
      const m = /server on (http:\/\/\S+)/.exec(out);
      if (m) found(m[1]!.replace(/\/$/, ""));
    });
    child.once("exit", (code) => failed(new Error(`serve exited with ${code}: ${out}`)));
  });
}, 30_000);

afterAll(async () => {
  child.kill("SIGTERM");
  await once(child, "exit");
});

/** A socket to the room, answering the join handshake; its token, error frames and close code. */
function connect(url: string) {
  const ws = new WebSocket(url);
  const seen = { token: "", errors: [] as string[], closed: undefined as number | undefined };
  ws.on("message", (data: Buffer) => {
    if (data[0] === 10) {
      seen.token = data.subarray(2, 2 + data[1]!).toString();
      ws.send(Buffer.from([10]));
    }
    if (data[0] === 11) seen.errors.push(data.subarray(1).toString("latin1"));
  });
  ws.on("close", (code) => (seen.closed = code));
  return { ws, seen };
}

async function until(ok: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("reconnecting to a seat (server in its own process)", () => {
  it("takes the client back to its seat with its reconnection token", async () => {
    const created = await fetch(`${base}/api/rooms`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ type: "simulation", options: { world: "tomi", seed: 3, humanSeats: "all", tickMs: 300, turnDeadlineMs: 30_000, reconnectSeconds: 20 } }),
    });
    expect(created.status).toBe(201);
    const { roomId } = (await created.json()) as { roomId: string };
    const seatOpen = async () => ((await (await fetch(`${base}/api/rooms/${roomId}`)).json()) as { seats: { occupied: boolean }[] }).seats[0]!.occupied;

    const reserved = await fetch(`${base}/matchmake/joinById/${roomId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ seat: "0", name: "rita" }) });
    const r = (await reserved.json()) as { sessionId: string; processId: string; roomId: string };
    const ws = base.replace(/^http/, "ws");
    const first = connect(`${ws}/${r.processId}/${r.roomId}?sessionId=${r.sessionId}`);
    await until(() => first.seen.token !== "", 10_000, "the join");
    await until(seatOpen, 10_000, "the seat to be taken");

    first.ws.terminate();
    const again = connect(`${ws}/${r.processId}/${r.roomId}?sessionId=${r.sessionId}&reconnectionToken=${first.seen.token}`);
    await until(() => again.seen.token !== "" || again.seen.closed !== undefined, 10_000, "the reconnection");
    expect(again.seen.errors).toEqual([]);
    expect(again.seen.closed).toBeUndefined();
    expect(await seatOpen()).toBe(true);
    again.ws.close();
  }, 30_000);
});
