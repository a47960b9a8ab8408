/**
 * Reconnection with the reconnection token, against a server in a process of its own: the test
 * harness defines a global WebSocket for its SDK clients, which hid that Node 20 has none and that
 * Colyseus needs one to take a client back (every reconnection failed and lost its seat).
 * Also what becomes of the seat when its person does not come back in time, or the server stops
 * meanwhile. Raw frames over `ws`, as any client in any language would send them (README, "Protocol").
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, describe, expect, it } from "vitest";

const ADMIN = "reconnect-admin-token-0123456789";

interface Served {
  child: ChildProcess;
  base: string;
  /** Everything the server printed. */
  out: () => string;
}

/** `socialworld serve` on a free port, once it says where it listens. */
async function serve(): Promise<Served> {
  const bin = join(import.meta.dirname, "..", "..", "bin", "socialworld.js");
  const store = mkdtempSync(join(tmpdir(), "sw-reconnect-"));
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--store", store, "--no-demo", "--admin-token", ADMIN], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stderr!.on("data", (d) => (out += String(d)));
  const base = await new Promise<string>((found, failed) => {
    child.stdout!.on("data", (d) => {
      out += String(d);
      const m = /server on (http:\/\/\S+)/.exec(out);
      if (m) found(m[1]!.replace(/\/$/, ""));
    });
    child.once("exit", (code) => failed(new Error(`serve exited with ${code}: ${out}`)));
  });
  return { child, base, out: () => out };
}

const servers: Served[] = [];

afterAll(async () => {
  for (const { child } of servers) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill("SIGKILL");
    await once(child, "exit");
  }
});

/** A human-seat ToMi room; its seat 0 reserved for `rita`: the room, and the URL to connect with. */
async function roomWithReservedSeat(base: string, reconnectSeconds: number) {
  const created = await fetch(`${base}/api/rooms`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ type: "simulation", options: { world: "tomi", seed: 3, humanSeats: "all", tickMs: 300, turnDeadlineMs: 30_000, reconnectSeconds } }),
  });
  expect(created.status).toBe(201);
  const { roomId } = (await created.json()) as { roomId: string };
  const seat = async () => ((await (await fetch(`${base}/api/rooms/${roomId}`)).json()) as { seats: { occupied: boolean; connected: boolean }[] }).seats[0]!;
  const reserved = await fetch(`${base}/matchmake/joinById/${roomId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ seat: "0", name: "rita" }) });
  const r = (await reserved.json()) as { sessionId: string; processId: string; roomId: string };
  const url = `${base.replace(/^http/, "ws")}/${r.processId}/${r.roomId}?sessionId=${r.sessionId}`;
  return { seat, url };
}

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

/** A server of its own, a room on it, and a client that took seat 0 (held open for `reconnectSeconds`). */
async function seated(reconnectSeconds: number) {
  const server = await serve();
  servers.push(server);
  const { seat, url } = await roomWithReservedSeat(server.base, reconnectSeconds);
  const first = connect(url);
  await until(() => first.seen.token !== "", 10_000, "the join");
  await until(async () => (await seat()).occupied, 10_000, "the seat to be taken");
  return { server, seat, url, first };
}

describe("reconnecting to a seat (server in its own process)", () => {
  it("takes the client back to its seat with its reconnection token", async () => {
    const { seat, url, first } = await seated(20);
    expect(await seat()).toEqual({ agent: expect.any(String), controller: expect.any(String), human: true, occupied: true, connected: true });

    first.ws.terminate();
    const again = connect(`${url}&reconnectionToken=${first.seen.token}`);
    await until(() => again.seen.token !== "" || again.seen.closed !== undefined, 10_000, "the reconnection");
    expect(again.seen.errors).toEqual([]);
    expect(again.seen.closed).toBeUndefined();
    expect(await seat()).toMatchObject({ occupied: true, connected: true });
    again.ws.close();
  }, 30_000);

  it("releases the seat when the reconnection window is over, and refuses the token after it", async () => {
    const { seat, url, first } = await seated(2);
    first.ws.terminate();
    // Read in the same answer that saw the drop: the seat is still held then.
    let dropped: { occupied: boolean; connected: boolean } | undefined;
    await until(async () => !(dropped = await seat()).connected, 10_000, "the server to see the connection drop");
    expect(dropped!.occupied).toBe(true);
    await until(async () => !(await seat()).occupied, 10_000, "the seat to be released");
    const late = connect(`${url}&reconnectionToken=${first.seen.token}`);
    await until(() => late.seen.closed !== undefined || late.seen.errors.length > 0, 10_000, "the refusal");
    expect(late.seen.token).toBe("");
  }, 30_000);

  // Colyseus's own reconnection timer outlived the room, so the process ran on for the rest of
  // the window (60 s by default, 20 s here) after it had said that every log was flushed.
  it("a server stopped while a seat waits for its person exits at once", async () => {
    const { server, seat, first } = await seated(20);
    first.ws.terminate();
    await until(async () => !(await seat()).connected, 10_000, "the server to see the connection drop");
    expect(await seat()).toMatchObject({ occupied: true, connected: false });

    const sent = Date.now();
    server.child.kill("SIGTERM");
    const [code] = (await once(server.child, "exit")) as [number | null];
    expect(code).toBe(0);
    expect(server.out()).toContain("every log is flushed");
    expect(Date.now() - sent).toBeLessThan(10_000);
  }, 30_000);
});
