/**
 * A worker thread of the load script: connects its share of spectator clients (the real SDK over
 * loopback) and measures, for every new timestep a client receives, the time from the server
 * recording it (the `at` of its tick) to the client having decoded the patch. Every four clients
 * reserve their seats from a loopback address of their own (127.0.1.1 and up reach a server on
 * 127.0.0.1), as people on as many machines would: the server's limits are per address.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Room } from "@colyseus/sdk";
import WebSocket from "ws";
import { postFrom } from "./post-from.js";

/** The address the next socket connects from: the SDK makes its socket synchronously in consumeSeatReservation. */
let bindTo = "127.0.0.1";
class BoundWebSocket extends WebSocket {
  constructor(url: string, options?: WebSocket.ClientOptions) {
    super(url, { ...options, localAddress: bindTo });
  }
}
// Before the SDK loads: it picks its WebSocket class once.
(globalThis as { WebSocket?: unknown }).WebSocket = BoundWebSocket;
const { Client } = await import("@colyseus/sdk");

export interface WorkerInput {
  readonly base: string;
  readonly roomIds: readonly string[];
  /** Global index of this worker's first client (clients are spread over rooms round-robin). */
  readonly first: number;
  readonly count: number;
  /** How many joins are in flight at once. */
  readonly connectConcurrency: number;
  /** False: a dropped client does not try to reconnect (the SDK's default does), so it counts as dropped at once. */
  readonly reconnect?: boolean;
}

export type WorkerMessage =
  /** `heldByHost`: the clients connected, by the address of the process hosting their room. */
  | { type: "connected"; ok: number; failed: number; errors: string[]; reserveMs: number[]; heldByHost: Record<string, number> }
  /** `byHost`, `dropsByHost`: the same latencies and drops by the address of the process hosting the room (a group of processes). */
  | { type: "latencies"; values: number[]; byHost: Record<string, number[]>; patches: number; drops: number; dropsByHost: Record<string, number> };

interface TickJson {
  timestep: number;
  at: number;
}

if (parentPort === null) {
  // Run by hand, there is no load script to report to.
  process.stderr.write("load-spectators: a worker thread of the load script, not a script of its own; run `node dist/measurements/load-server.js --help`\n");
  process.exit(2);
}
const input = workerData as WorkerInput;
const rooms: Room[] = [];
let latencies: number[] = [];
let byHost: Record<string, number[]> = {};
const heldByHost: Record<string, number> = {};
let dropsByHost: Record<string, number> = {};
/** How long each seat reservation (matchmaking) took, ms. */
const reserveMs: number[] = [];
let patches = 0;
let drops = 0;
let recording = false;
let errorsSeen = 0;

async function connectOne(i: number): Promise<void> {
  const roomId = input.roomIds[(input.first + i) % input.roomIds.length]!;
  const n = input.first + i;
  const address = `127.0.${1 + Math.floor(n / 4 / 250)}.${1 + (Math.floor(n / 4) % 250)}`;
  const asked = performance.now();
  const r = await postFrom(`${input.base}/matchmake/joinById/${roomId}`, "{}", address);
  if (r.status !== 200) throw new Error(`reserving a place from ${address}: ${r.status} ${r.text}`);
  reserveMs.push(performance.now() - asked);
  const host = String((r.json as { publicAddress?: string }).publicAddress ?? new URL(input.base).host);
  bindTo = address;
  const room = await new Client(input.base).consumeSeatReservation(r.json);
  let lastAt = 0;
  room.onStateChange((state) => {
    patches++;
    const timeline = (state as unknown as { timeline: ArrayLike<TickJson> }).timeline;
    const last = timeline.length ? timeline[timeline.length - 1] : undefined;
    if (!last || last.at === lastAt) return;
    const first = lastAt === 0;
    lastAt = last.at;
    // The full state on joining is not a patch.
    if (!first && recording) {
      const ms = Date.now() - last.at;
      latencies.push(ms);
      (byHost[host] ??= []).push(ms);
    }
  });
  room.onLeave(() => {
    drops++;
    dropsByHost[host] = (dropsByHost[host] ?? 0) + 1;
  });
  room.onMessage("error", (m: { error?: string }) => {
    if (errorsSeen++ < 3) process.stderr.write(`load-spectators: the server said: ${m.error ?? JSON.stringify(m)}\n`);
  });
  if (input.reconnect === false) room.reconnection.enabled = false;
  rooms.push(room);
  heldByHost[host] = (heldByHost[host] ?? 0) + 1;
}

async function connectAll(): Promise<void> {
  let next = 0;
  let ok = 0;
  const errors: string[] = [];
  const worker = async () => {
    while (next < input.count) {
      const i = next++;
      try {
        await connectOne(i);
        ok++;
      } catch (err) {
        if (errors.length < 5) errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.connectConcurrency, input.count) }, worker));
  parentPort!.postMessage({ type: "connected", ok, failed: input.count - ok, errors, reserveMs, heldByHost } satisfies WorkerMessage);
}

parentPort!.on("message", (msg: { type: "record" | "report" | "close" }) => {
  if (msg.type === "record") {
    latencies = [];
    byHost = {};
    patches = 0;
    drops = 0;
    dropsByHost = {};
    recording = true;
  } else if (msg.type === "report") {
    recording = false;
    parentPort!.postMessage({ type: "latencies", values: latencies, byHost, patches, drops, dropsByHost } satisfies WorkerMessage);
  } else if (msg.type === "close") {
    for (const r of rooms) {
      // Leaving, not dropping: a dropped client would try to reconnect.
      r.reconnection.enabled = false;
      void r.leave().catch(() => undefined);
    }
    setTimeout(() => process.exit(0), 200);
  }
});

void connectAll();
