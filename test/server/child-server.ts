/**
 * `socialworld serve` in a process of its own, for what only a real process shows (its exit, a
 * client without the test harness's global WebSocket), with raw clients (raw-client.ts). Servers
 * started here are killed after the file.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { connect, until } from "./raw-client.js";

export const ADMIN = "child-server-admin-token-0123456789";

export interface Served {
  child: ChildProcess;
  base: string;
  store: string;
  /** Everything the server printed. */
  out: () => string;
}

const servers: Served[] = [];

afterAll(async () => {
  for (const { child } of servers) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill("SIGKILL");
    await once(child, "exit");
  }
});

/** `socialworld serve` on a free port (`env` added to this process's), once it says where it listens. */
export async function serve(store = mkdtempSync(join(tmpdir(), "sw-serve-")), extra: readonly string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const bin = join(import.meta.dirname, "..", "..", "bin", "socialworld.js");
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--store", store, "--no-demo", "--admin-token", ADMIN, ...extra], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
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
  const served = { child, base, store, out: () => out };
  servers.push(served);
  return served;
}

/** A simulation room with `options`; its seat 0 reserved for `name`: the room, its run, and the URL to connect with. */
export async function simulationWithReservedSeat(base: string, options: Record<string, unknown>, name = "rita") {
  const created = await fetch(`${base}/api/rooms`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ type: "simulation", options }),
  });
  expect(created.status).toBe(201);
  const { roomId, runId } = (await created.json()) as { roomId: string; runId: string };
  const reserved = await fetch(`${base}/matchmake/joinById/${roomId}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ seat: "0", name }) });
  const r = (await reserved.json()) as { sessionId: string; processId: string; roomId: string };
  const url = `${base.replace(/^http/, "ws")}/${r.processId}/${r.roomId}?sessionId=${r.sessionId}`;
  return { roomId, runId, url };
}

/** A human-seat ToMi room; its seat 0 reserved for `rita`: the room, and the URL to connect with. */
export async function roomWithReservedSeat(base: string, reconnectSeconds: number) {
  const { roomId, url } = await simulationWithReservedSeat(base, { world: "tomi", seed: 3, humanSeats: "all", tickMs: 300, turnDeadlineMs: 30_000, reconnectSeconds });
  const seat = async () => ((await (await fetch(`${base}/api/rooms/${roomId}`)).json()) as { seats: { occupied: boolean; connected: boolean }[] }).seats[0]!;
  return { roomId, seat, url };
}

/** A server of its own, a room on it, and a client that took seat 0 (held open for `reconnectSeconds`). */
export async function seated(reconnectSeconds: number) {
  const server = await serve();
  const { seat, url } = await roomWithReservedSeat(server.base, reconnectSeconds);
  const first = connect(url);
  await until(() => first.seen.token !== "", 10_000, "the join");
  await until(async () => (await seat()).occupied, 10_000, "the seat to be taken");
  return { server, seat, url, first };
}
