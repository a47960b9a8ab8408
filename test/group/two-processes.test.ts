/**
 * Two `serve` processes on one Redis and one store (issue 32): either answers matchmaking for the
 * rooms of both, a client that asked one is sent to the other where the room lives, reconnection
 * works through whichever process the client asks, a private room's tokens are checked by its own
 * process, /progress reaches the clients of both, and the REST API of each lists and stops the
 * rooms of both.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN, type Served } from "../server/child-server.js";
import { connect, until } from "../server/raw-client.js";
import { startGroup } from "./group-checks.js";
import type { TestRedis } from "./redis-server.js";

let redis: TestRedis;
let a: Served;
let b: Served;

beforeAll(async () => {
  let servers: Served[];
  ({ redis, servers } = await startGroup(2, "sw-group-"));
  [a, b] = servers as [Served, Served];
}, 60_000);

const post = async (base: string, path: string, body: unknown, admin = false) => {
  const res = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json", ...(admin ? { authorization: `Bearer ${ADMIN}` } : {}) }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
};
const get = async (base: string, path: string, admin = false) => {
  const res = await fetch(base + path, admin ? { headers: { authorization: `Bearer ${ADMIN}` } } : {});
  return { status: res.status, json: (await res.json()) as any };
};
const address = (s: Served) => s.base.replace(/^http:\/\//, "");
/** The process that hosts a room (its reservation names it), and the other one. */
async function hostOf(roomId: string, options: Record<string, unknown> = {}): Promise<{ host: Served; other: Served }> {
  const r = await post(a.base, `/matchmake/joinById/${roomId}`, options);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  const host = r.json.publicAddress === address(a) ? a : b;
  expect(r.json.publicAddress).toBe(address(host));
  return { host, other: host === a ? b : a };
}
const wsUrl = (r: { publicAddress: string; processId: string; roomId: string; sessionId: string }) => `ws://${r.publicAddress}/${r.processId}/${r.roomId}?sessionId=${r.sessionId}`;

describe("two server processes on one Redis", () => {
  it("say at start that they are in a group", async () => {
    // (Printed after the line the harness waits for.)
    for (const s of [a, b]) await until(() => s.out().includes(`in the group on ${redis.url} · this process's rooms at ${address(s)}`), 10_000, "the group line");
  });

  it("seat a client who asked one process in a room of the other, and take it back through either", async () => {
    const created = await post(a.base, "/api/rooms", { type: "simulation", options: { world: "tomi", seed: 3, humanSeats: "all", tickMs: 300, turnDeadlineMs: 30_000, reconnectSeconds: 20 } }, true);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const { roomId } = created.json;
    const { host, other } = await hostOf(roomId);
    // Both list it once.
    for (const s of [a, b]) expect((await get(s.base, "/api/rooms")).json.rooms.filter((r: { roomId: string }) => r.roomId === roomId)).toHaveLength(1);

    const reserved = await post(other.base, `/matchmake/joinById/${roomId}`, { seat: "0", name: "rita" });
    expect(reserved.status, JSON.stringify(reserved.json)).toBe(200);
    // The client is sent to the process where the room lives.
    expect(reserved.json.publicAddress).toBe(address(host));
    const first = connect(wsUrl(reserved.json));
    await until(() => first.seen.token !== "" || first.seen.closed !== undefined, 10_000, "the join");
    expect(first.seen.errors).toEqual([]);
    const seat = async (s: Served) => (await get(s.base, `/api/rooms/${roomId}`)).json.seats[0];
    await until(async () => (await seat(other)).connected === true, 10_000, "the seat, seen from the other process");

    // Dropped; it comes back through the process that does not host the room.
    first.ws.terminate();
    await until(async () => (await seat(other)).connected === false, 10_000, "the drop");
    const back = await post(other.base, `/matchmake/reconnect/${roomId}`, { reconnectionToken: first.seen.token });
    expect(back.status, JSON.stringify(back.json)).toBe(200);
    expect(back.json.publicAddress).toBe(address(host));
    const again = connect(`${wsUrl(back.json)}&reconnectionToken=${first.seen.token}`);
    await until(() => again.seen.token !== "" || again.seen.closed !== undefined, 10_000, "the reconnection");
    expect(again.seen.errors).toEqual([]);
    await until(async () => (await seat(host)).connected === true, 10_000, "the seat taken back");
    expect(await seat(other)).toMatchObject({ occupied: true, connected: true });

    // A made-up token is refused by either process, as by one alone.
    expect((await post(other.base, `/matchmake/reconnect/${roomId}`, { reconnectionToken: "not-a-token" })).status).toBe(410);
    again.ws.close();

    // Stopped through the other process: gone from both.
    const stopped = await fetch(`${other.base}/api/rooms/${roomId}`, { method: "DELETE", headers: { authorization: `Bearer ${ADMIN}` } });
    expect(stopped.status).toBe(200);
    // The other process learns of it through Redis's listings: on a loaded machine, seconds.
    for (const s of [a, b]) await until(async () => (await get(s.base, `/api/rooms/${roomId}`)).status === 404, 30_000, "the room to go");
  }, 60_000);

  it("check a private room's tokens in the room's own process, whichever process is asked", async () => {
    const created = await post(b.base, "/api/rooms", { type: "simulation", options: { world: "tomi", seed: 5, humanSeats: "all", tickMs: 300, turnDeadlineMs: 30_000, private: true } }, true);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const { roomId, spectatorToken, seatTokens } = created.json;
    expect(spectatorToken).toEqual(expect.any(String));
    for (const s of [a, b]) {
      // Hidden from the anonymous list and page, shown to the admin.
      expect((await get(s.base, "/api/rooms")).json.rooms.some((r: { roomId: string }) => r.roomId === roomId)).toBe(false);
      expect((await get(s.base, `/api/rooms/${roomId}`)).status).toBe(404);
      expect((await get(s.base, `/api/rooms/${roomId}`, true)).status).toBe(200);
      const none = await post(s.base, `/matchmake/joinById/${roomId}`, {});
      expect(none.status).toBe(403);
      expect(none.json.error).not.toMatch(/internal/);
      expect((await post(s.base, `/matchmake/joinById/${roomId}`, { token: "wrong-token-0123456789" })).status).toBe(403);
      expect((await post(s.base, `/matchmake/joinById/${roomId}`, { token: spectatorToken })).status).toBe(200);
      expect((await post(s.base, `/matchmake/joinById/${roomId}`, { seat: "0", token: seatTokens[0].token, name: "ana" })).status).toBe(200);
    }
    await fetch(`${a.base}/api/rooms/${roomId}`, { method: "DELETE", headers: { authorization: `Bearer ${ADMIN}` } });
  }, 60_000);

  it("stream a run's progress to the clients of both processes, a private run's only to its token's holders", async () => {
    const { io } = await import("socket.io-client");
    const listen = async (base: string, token?: string) => {
      const socket = io(`${base}/progress`, { transports: ["websocket"], ...(token ? { auth: { token } } : {}) });
      const events: { type: string; event: any }[] = [];
      for (const type of ["progress", "finished", "snapshot"]) socket.on(type, (e: any) => (type === "snapshot" ? e.forEach((x: any) => events.push({ type, event: x })) : events.push({ type, event: e })));
      await new Promise<void>((done) => socket.on("connect", () => done()));
      return { socket, events };
    };
    const anonymous = [await listen(a.base), await listen(b.base)];
    const bench = (options: Record<string, unknown>) =>
      post(a.base, "/api/rooms", { type: "benchmark", options: { benchmark: "tomi", generate: { n: 6, seed: 4 }, agent: "simulation", tickMs: 150, ...options } }, true);
    // The private run waits for a person who never answers, so that it cannot end before its
    // listeners are connected (a loaded machine took longer to connect them than a short run
    // lasts); it ends when it is stopped, once they are.
    const priv = await bench({ agent: "human", turnDeadlineMs: 600_000, private: true, title: "secret study" });
    expect(priv.status, JSON.stringify(priv.json)).toBe(201);
    const { runId, spectatorToken } = priv.json;
    // Token holders connected to each process, one with the token at connection, one subscribing with it.
    const holders = [await listen(a.base, spectatorToken), await listen(b.base, spectatorToken)];
    // Subscribing to a process that does not play the run.
    const subscriber = await listen((await hostOf(priv.json.roomId, { token: spectatorToken })).other.base);
    subscriber.socket.emit("subscribe", { runs: [runId], token: spectatorToken });
    const pub = await bench({});
    expect(pub.status).toBe(201);
    for (const l of anonymous) await until(() => l.events.some((e) => e.type === "finished" && e.event.runId === pub.json.runId), 30_000, "the public run's end");
    // The public run played after the subscription: the private one is stopped now.
    expect((await fetch(`${b.base}/api/rooms/${priv.json.roomId}`, { method: "DELETE", headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
    for (const l of [...holders, subscriber]) await until(() => l.events.some((e) => e.type === "finished" && e.event.runId === runId), 30_000, "the private run's end");
    for (const l of anonymous) {
      const seen = JSON.stringify(l.events);
      for (const secret of [runId, "secret study", priv.json.roomId]) expect(seen).not.toContain(secret);
    }
    for (const l of [...anonymous, ...holders, subscriber]) l.socket.close();
  }, 60_000);
});

describe("serve --redis refuses", () => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; err: string }>((done) => {
      const bin = join(import.meta.dirname, "..", "..", "bin", "socialworld.js");
      const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--no-demo", "--store", mkdtempSync(join(tmpdir(), "sw-group-")), ...args], { stdio: ["ignore", "ignore", "pipe"] });
      let err = "";
      child.stderr.on("data", (d) => (err += String(d)));
      child.on("close", (code) => done({ code, err }));
    });

  it("a Redis it cannot reach, naming it and saying how to start one", async () => {
    const { code, err } = await run(["--redis", "redis://:hunter2@127.0.0.1:1"]);
    expect(code).toBe(1);
    expect(err).toContain("cannot reach Redis at redis://***@127.0.0.1:1");
    expect(err).toContain("redis-server --port 6379");
    expect(err).not.toContain("hunter2");
  }, 30_000);

  it("a URL that is not a Redis URL, and --public-address without --redis", async () => {
    const bad = await run(["--redis", "http://localhost:6379"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--redis: a Redis URL is redis://");
    const alone = await run(["--public-address", "localhost:2600"]);
    expect(alone.code).toBe(2);
    expect(alone.err).toContain("--public-address is for a group of processes");
  }, 30_000);
});
