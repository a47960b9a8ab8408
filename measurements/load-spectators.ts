/**
 * A worker thread of the load scripts: connects its share of spectator clients over loopback and
 * measures, for every new timestep a client receives, the time from the server recording it (the
 * `at` of its tick) to the client having it. Every four clients reserve their seats from a
 * loopback address of their own (127.0.1.1 and up reach a server on 127.0.0.1), as people on as
 * many machines would: the server's limits are per address.
 *
 * Two kinds of client, both seen by the server as the same spectator (the same seat reservation,
 * the same WebSocket, the same join acknowledgement, the same frames sent to it):
 * - a *decoding* client is the real SDK: it decodes every patch into the room's state and is timed
 *   once it has (the `at` read from the state it decoded);
 * - a *light* client consumes its seat over a plain WebSocket, acknowledges the join as the SDK
 *   does, and is timed when a patch's frame arrives, without decoding it. Every spectator of a room
 *   is sent the same bytes for one patch (they share one view), so the `at` of the timestep a
 *   frame carries is known from the room's decoding client in this worker, which saw the same
 *   bytes: a frame is matched by its body's hash. Decoding a patch costs a client far more than
 *   receiving it does, and it is the client's work, not the server's: with light clients one
 *   machine's cores go to the servers measured rather than to the clients' decoders (docs/scale.md).
 * `decodingPerRoom` (absent: every client decodes) sets how many of each room's clients in this
 * worker decode; the report gives both kinds' latencies apart, so that they can be compared.
 */
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import type { Room } from "@colyseus/sdk";
import { Protocol, PROTOCOL_CODE_MASK, ProtocolModifier } from "@colyseus/shared-types";
import WebSocket from "ws";
import { postFrom } from "./post-from.js";

/** The patch (its body's hash and length) a decoding client's socket received last: read by its state handler, which runs within the same message event. */
let lastPatch: number | undefined;

/** The address the next socket connects from: the SDK makes its socket synchronously in consumeSeatReservation. */
let bindTo = "127.0.0.1";
class BoundWebSocket extends WebSocket {
  constructor(url: string, options?: WebSocket.ClientOptions) {
    super(url, { ...options, localAddress: bindTo });
    // Registered before the SDK's own listener, so it runs first for every frame.
    this.on("message", (data: WebSocket.RawData) => (lastPatch = patchKey(bytesOf(data))));
  }
}
// Before the SDK loads: it picks its WebSocket class once.
(globalThis as { WebSocket?: unknown }).WebSocket = BoundWebSocket;
const { Client } = await import("@colyseus/sdk");

export interface WorkerInput {
  /** The processes seats are reserved through: client n asks `bases[n % bases.length]`. */
  readonly bases: readonly string[];
  readonly roomIds: readonly string[];
  /** Global indices of this worker's clients: client n watches `roomIds[n % roomIds.length]` and reserves from an address of its own group of four. */
  readonly clients: readonly number[];
  /** How many joins are in flight at once. */
  readonly connectConcurrency: number;
  /** False: a dropped client does not try to reconnect (the SDK's default does), so it counts as dropped at once. */
  readonly reconnect?: boolean;
  /** How many of each room's clients in this worker decode with the SDK (the first ones to join); the others are light. Absent: all decode. */
  readonly decodingPerRoom?: number;
  /** The niceness of this thread (Linux counts it per thread), so that the servers measured come first; absent: the script's. */
  readonly nice?: number;
}

export type WorkerMessage =
  /** `heldByHost`: the clients connected, by the address of the process hosting their room. */
  | { type: "connected"; ok: number; failed: number; errors: string[]; reserveMs: number[]; heldByHost: Record<string, number>; decoding: number; light: number }
  /**
   * `values`: every client's latencies (decoding clients' after decoding, light ones' at arrival); `decoded`, `light`: each kind's
   * apart; `byHost`, `dropsByHost`: by the address of the process hosting the room (a group of processes). `unmatched`: light
   * clients' frames whose timestep the room's decoding client did not see within 5 s (not counted in the latencies).
   */
  | {
      type: "latencies";
      values: number[];
      decoded: number[];
      light: number[];
      byHost: Record<string, number[]>;
      patches: number;
      drops: number;
      dropsByHost: Record<string, number>;
      unmatched: number;
    };

interface TickJson {
  timestep: number;
  at: number;
}

function bytesOf(data: WebSocket.RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}

/**
 * A state patch's key: its body's FNV-1a hash times its length (the body is what the room sends
 * every spectator alike; a timed frame's prefix, a clock sample and the client's own input count, is
 * not); undefined for any other frame.
 */
function patchKey(b: Uint8Array): number | undefined {
  if (b.length === 0 || (b[0]! & PROTOCOL_CODE_MASK) !== Protocol.ROOM_STATE_PATCH) return undefined;
  let h = 0x811c9dc5;
  for (let i = b[0]! & ProtocolModifier.TIMED ? 9 : 1; i < b.length; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return (h >>> 0) * 2 ** 20 + (b.length % 2 ** 20);
}

if (parentPort === null) {
  // Run by hand, there is no load script to report to.
  process.stderr.write("load-spectators: a worker thread of the load script, not a script of its own; run `node dist/measurements/load-server.js --help`\n");
  process.exit(2);
}
const input = workerData as WorkerInput;
if (input.nice !== undefined) setPriority(input.nice);
/** What to end on close: the SDK rooms, and the light clients' sockets. */
const leaving: (() => void)[] = [];
let decodedValues: number[] = [];
let lightValues: number[] = [];
let byHost: Record<string, number[]> = {};
const heldByHost: Record<string, number> = {};
let dropsByHost: Record<string, number> = {};
/** How long each seat reservation (matchmaking) took, ms. */
const reserveMs: number[] = [];
let patches = 0;
let drops = 0;
let recording = false;
let errorsSeen = 0;
/**
 * By room: each patch key its decoding clients saw, and the `at` of the timestep it brought (null:
 * it brought none). Two generations, the older dropped every 30 s: a key is kept 30 to 60 s, and
 * a light client's frame is looked up within 5 s of its arrival.
 */
const timestepOf = new Map<string, { recent: Map<number, number | null>; older: Map<number, number | null> }>();
const lookUp = (room: string, key: number) => {
  const t = timestepOf.get(room);
  if (t === undefined) return undefined;
  return t.recent.has(key) ? t.recent.get(key) : t.older.get(key);
};
setInterval(() => {
  for (const t of timestepOf.values()) [t.older, t.recent] = [t.recent, new Map()];
}, 30_000).unref();
// Pending frames are looked up every second, not only at the window's report: a key is kept for as
// little as 30 s, so in a longer window a frame that came before its room's decoding client had
// decoded it would find its key dropped by the report, and be counted unmatched.
setInterval(() => {
  if (recording) matchPending();
}, 1000).unref();
/** Light clients' patch frames whose timestep was not known yet on arrival: room, key, arrival (ms since the epoch), host. */
let pending: { room: string; key: number; arrived: number; host: string }[] = [];
let unmatched = 0;
/** How many clients of each room have joined as decoding ones. */
const decodingJoined = new Map<string, number>();

function timed(kind: number[], host: string, ms: number): void {
  kind.push(ms);
  (byHost[host] ??= []).push(ms);
}

function dropped(host: string): void {
  drops++;
  dropsByHost[host] = (dropsByHost[host] ?? 0) + 1;
}

async function connectOne(n: number): Promise<"decoding" | "light"> {
  const roomId = input.roomIds[n % input.roomIds.length]!;
  const address = `127.0.${1 + Math.floor(n / 4 / 250)}.${1 + (Math.floor(n / 4) % 250)}`;
  const base = input.bases[n % input.bases.length]!;
  const decoding = input.decodingPerRoom === undefined || (decodingJoined.get(roomId) ?? 0) < input.decodingPerRoom;
  if (decoding) decodingJoined.set(roomId, (decodingJoined.get(roomId) ?? 0) + 1);
  const asked = performance.now();
  const r = await postFrom(`${base}/matchmake/joinById/${roomId}`, "{}", address);
  if (r.status !== 200) {
    if (decoding) decodingJoined.set(roomId, decodingJoined.get(roomId)! - 1);
    throw new Error(`reserving a place from ${address}: ${r.status} ${r.text}`);
  }
  reserveMs.push(performance.now() - asked);
  const host = String((r.json as { publicAddress?: string }).publicAddress ?? new URL(base).host);
  try {
    if (decoding) await joinDecoding(r.json, base, address, roomId, host);
    else await joinLight(r.json as Reservation, address, roomId, host);
  } catch (err) {
    if (decoding) decodingJoined.set(roomId, decodingJoined.get(roomId)! - 1);
    throw err;
  }
  heldByHost[host] = (heldByHost[host] ?? 0) + 1;
  return decoding ? "decoding" : "light";
}

async function joinDecoding(reservation: unknown, base: string, address: string, roomId: string, host: string): Promise<void> {
  bindTo = address;
  const room: Room = await new Client(base).consumeSeatReservation(reservation as Parameters<InstanceType<typeof Client>["consumeSeatReservation"]>[0]);
  if (!timestepOf.has(roomId)) timestepOf.set(roomId, { recent: new Map(), older: new Map() });
  const seen = timestepOf.get(roomId)!;
  let lastAt = 0;
  room.onStateChange((state) => {
    patches++;
    const key = lastPatch;
    const timeline = (state as unknown as { timeline: ArrayLike<TickJson> }).timeline;
    const last = timeline.length ? timeline[timeline.length - 1] : undefined;
    const fresh = last !== undefined && last.at !== lastAt;
    if (key !== undefined) seen.recent.set(key, fresh ? last.at : null);
    if (!fresh) return;
    const first = lastAt === 0;
    lastAt = last.at;
    // The full state on joining is not a patch.
    if (!first && recording) timed(decodedValues, host, Date.now() - last.at);
  });
  room.onLeave(() => dropped(host));
  room.onMessage("error", (m: { error?: string }) => {
    if (errorsSeen++ < 3) process.stderr.write(`load-spectators: the server said: ${m.error ?? JSON.stringify(m)}\n`);
  });
  if (input.reconnect === false) room.reconnection.enabled = false;
  leaving.push(() => {
    // Leaving, not dropping: a dropped client would try to reconnect.
    room.reconnection.enabled = false;
    void room.leave().catch(() => undefined);
  });
}

/** The parts of a seat reservation a client dials with (as the SDK's Client.buildEndpoint does). */
interface Reservation {
  roomId: string;
  processId: string;
  sessionId: string;
  publicAddress?: string;
}

/** A light client: the seat consumed over a plain WebSocket; resolves once the server's join is acknowledged. It never reconnects. */
function joinLight(r: Reservation, address: string, roomId: string, host: string): Promise<void> {
  const url = `ws://${r.publicAddress ?? host}/${r.processId}/${r.roomId}?sessionId=${encodeURIComponent(r.sessionId)}`;
  const ws = new WebSocket(url, { localAddress: address });
  let joined = false;
  return new Promise((done, fail) => {
    ws.on("message", (data: WebSocket.RawData) => {
      const arrived = Date.now();
      const b = bytesOf(data);
      const code = b[0]! & PROTOCOL_CODE_MASK;
      if (!joined) {
        if (code === Protocol.JOIN_ROOM) {
          joined = true;
          ws.send(Uint8Array.of(Protocol.JOIN_ROOM));
          done();
        } else if (code === Protocol.ERROR) fail(new Error(`the server refused the join (frame ${Buffer.from(b).toString("hex").slice(0, 80)})`));
        return;
      }
      const key = patchKey(b);
      if (key === undefined) return;
      patches++;
      if (!recording) return;
      const at = lookUp(roomId, key);
      if (at === undefined) pending.push({ room: roomId, key, arrived, host });
      else if (at !== null) timed(lightValues, host, arrived - at);
    });
    ws.on("close", () => (joined ? dropped(host) : fail(new Error("the server closed the connection before the join"))));
    ws.on("error", (err) => {
      if (!joined) fail(err);
    });
    leaving.push(() => {
      ws.removeAllListeners("close");
      if (ws.readyState === WebSocket.OPEN) ws.send(Uint8Array.of(Protocol.LEAVE_ROOM));
      ws.close();
    });
  });
}

/** Light clients' frames whose timestep is known now become latencies; those still unknown 5 s after arriving are given up. */
function matchPending(): void {
  const now = Date.now();
  const still: typeof pending = [];
  for (const p of pending) {
    const at = lookUp(p.room, p.key);
    if (at === undefined) {
      if (now - p.arrived < 5000) still.push(p);
      else unmatched++;
    } else if (at !== null) timed(lightValues, p.host, p.arrived - at);
  }
  pending = still;
}

async function connectAll(): Promise<void> {
  let next = 0;
  let ok = 0;
  const kinds = { decoding: 0, light: 0 };
  const errors: string[] = [];
  const worker = async () => {
    while (next < input.clients.length) {
      const n = input.clients[next++]!;
      try {
        kinds[await connectOne(n)]++;
        ok++;
      } catch (err) {
        if (errors.length < 5) errors.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.connectConcurrency, input.clients.length) }, worker));
  parentPort!.postMessage({ type: "connected", ok, failed: input.clients.length - ok, errors, reserveMs, heldByHost, ...kinds } satisfies WorkerMessage);
}

parentPort!.on("message", (msg: { type: "record" | "report" | "close" }) => {
  if (msg.type === "record") {
    decodedValues = [];
    lightValues = [];
    byHost = {};
    patches = 0;
    drops = 0;
    dropsByHost = {};
    // Frames still pending from the window before are counted in this one, once their timestep is known.
    unmatched = 0;
    recording = true;
  } else if (msg.type === "report") {
    recording = false;
    matchPending();
    parentPort!.postMessage({
      type: "latencies",
      values: [...decodedValues, ...lightValues],
      decoded: decodedValues,
      light: lightValues,
      byHost,
      patches,
      drops,
      dropsByHost,
      unmatched,
    } satisfies WorkerMessage);
  } else if (msg.type === "close") {
    for (const leave of leaving) leave();
    setTimeout(() => process.exit(0), 200);
  }
});

void connectAll();
