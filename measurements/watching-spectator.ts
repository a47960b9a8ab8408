/**
 * A worker thread of the attack script: a spectator of one room, on an event loop of its own (the
 * attacks keep the script's own loop busy writing megabytes and thousands of requests, which
 * would delay a spectator there, not the server). It measures how late it sees each timestep
 * (spectator-latency.ts) over windows the script opens and closes.
 */
import { parentPort, workerData } from "node:worker_threads";
import WebSocket from "ws";
import { watchLatency } from "./spectator-latency.js";

export interface SpectatorInput {
  readonly base: string;
  readonly roomId: string;
  readonly tickMs: number;
}

export type SpectatorRequest = { readonly type: "start" } | { readonly type: "stop" } | { readonly type: "close" };
export type SpectatorReply = { readonly type: "ready" } | { readonly type: "window"; readonly p99: number; readonly timesteps: number };

if (parentPort === null) {
  process.stderr.write("watching-spectator: a worker thread of the attack script; run `node dist/measurements/attack-server.js --help`\n");
  process.exit(2);
}
const input = workerData as SpectatorInput;
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
const { Client } = await import("@colyseus/sdk");
const room = await new Client(input.base).joinById(input.roomId);
const latency = watchLatency(room, input.tickMs);
const reply = (r: SpectatorReply) => parentPort!.postMessage(r);
while (latency.values.length < 5) await new Promise((r) => setTimeout(r, 20));
reply({ type: "ready" });
parentPort.on("message", (msg: SpectatorRequest) => {
  if (msg.type === "start") latency.values.length = 0;
  else if (msg.type === "stop") reply({ type: "window", p99: latency.p99(), timesteps: latency.values.length });
  else void room.leave().finally(() => process.exit(0));
});
