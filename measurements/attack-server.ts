/**
 * Attack script (not a test): replays findings 1, 2, 3 and 5 of the hardening issue against a
 * server it starts on loopback, as a hostile client would, while a spectator watches a room, and
 * prints what each attack tried and how much of it got through.
 *
 *   npm run attack:server -- [--flood N] [--seconds S] [--json OUT.json]
 *
 * It starts `socialworld serve --no-demo` as a second process on a free port with a fresh store
 * holding a small policy (so /v1 serves a model), creates the rooms it attacks through the admin
 * API, and runs each attack in turn from loopback addresses of its own (127.0.0.2 and up reach a
 * server on 127.0.0.1: to the server they are other clients). A spectator of a room that plays
 * a timestep every 50 ms measures, during each attack, how late it sees each timestep (p99).
 * Every attack is bounded in time; everything stops by itself. Exit status 1 when an attack
 * succeeded at all.
 *
 * The table: attack, attempts, succeeded (attempts the server should have refused and did not),
 * and the watching spectator's p99 patch latency during the attack.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import WebSocket from "ws";
import { z } from "zod";
import { saveCheckpoint } from "../models/checkpoint.js";
import { createFromScratch } from "../models/from-scratch.js";
import { scriptArgs } from "./script-args.js";
import { intArg } from "../cli/args.js";
import { postFrom as post } from "./post-from.js";
import { freePort, startServe, stopServe } from "./server-process.js";
import type { SpectatorInput, SpectatorReply, SpectatorRequest } from "./watching-spectator.js";

const Args = z.object({
  /** Reservations per flood. */
  flood: intArg(10, 20_000).default(2000),
  /** How long the message flood lasts. */
  seconds: intArg(1, 60).default(5),
  json: z.string().optional(),
  /** Attack a server run from another checkout (built), to compare before and after a change. */
  against: z.string().min(1).optional(),
});

const USAGE = `node dist/measurements/attack-server.js [options]   (or: npm run attack:server -- [options])

Starts the server as a second process on loopback, attacks it as a hostile client would
(findings 1, 2, 3 and 5 of the hardening issue) while a spectator watches a room, and prints
each attack's attempts, how many succeeded, and the spectator's p99 patch latency meanwhile.

Options:
  --flood N        seat reservations per flood (default 2000)
  --seconds S      how long the message flood lasts (default 5)
  --json OUT.json  also write the results as JSON
  --against DIR    attack the server of another (built) checkout instead of this one's
  --help           this text`;

const ADMIN = "attack-script-admin-token-0123456789";
const TICK_MS = 50;
/** The server's defaults the attacks are judged against (server/security/client-guard.ts). */
const LIMITS = { pendingPerAddress: 8, seatsPerAddress: 4, seatMessageBurst: 20, seatMessagesPerSecond: 5 };

interface Row {
  readonly attack: string;
  readonly attempts: number;
  readonly succeeded: number;
  /** What counts as success, for the reader. */
  readonly meaning: string;
  p99?: number;
}

const log = (s: string) => process.stderr.write(s + "\n");

async function main(): Promise<void> {
  const args = scriptArgs({ name: "attack-server", usage: USAGE, schema: Args });
  (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
  const { Client } = await import("@colyseus/sdk");
  const { io } = await import("socket.io-client");

  const store = mkdtempSync(join(tmpdir(), "sw-attack-"));
  log("making a small policy for /v1 ...");
  const policy = await createFromScratch({ preset: "tiny", seed: 1, corpus: ["Ella entered the garage. The apple is in the box. Where is the apple?"] });
  mkdirSync(join(store, "policies"), { recursive: true });
  saveCheckpoint(join(store, "policies", "tiny"), policy.model, policy.files);

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  log(`starting the server on ${base} ...`);
  const server = await startServe(port, store, ADMIN, (text) => process.stderr.write(`  server: ${text}`), ...(args.against ? [resolve(args.against)] : []));
  const admin = { authorization: `Bearer ${ADMIN}` };
  const createRoom = async (type: string, options: Record<string, unknown>) => {
    const r = await post(`${base}/api/rooms`, JSON.stringify({ type, options }), "127.0.0.1", admin);
    if (r.status !== 201) throw new Error(`could not create a ${type} room: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json as { roomId: string; runId: string; spectatorToken?: string; seatTokens?: { index: number; token: string }[]; seats: unknown[] };
  };
  const rows: Row[] = [];
  let spectator: Worker | undefined;
  try {
    // The room everybody watches, and its spectator (a thread of its own).
    const watched = await createRoom("simulation", { world: "tomi", loop: true, pauseMs: 0, tickMs: TICK_MS, title: "watched" });
    spectator = new Worker(new URL("./watching-spectator.js", import.meta.url), { workerData: { base, roomId: watched.roomId, tickMs: TICK_MS } satisfies SpectatorInput });
    const next = () => new Promise<SpectatorReply>((done, fail) => {
      spectator!.once("message", done);
      spectator!.once("error", fail);
    });
    const tell = (m: SpectatorRequest) => spectator!.postMessage(m);
    await next();
    const attack = async (run: () => Promise<Omit<Row, "p99">>) => {
      tell({ type: "start" });
      const row: Row = await run();
      // A short calm after each attack, watched too: a stall the attack left behind counts.
      await new Promise((r) => setTimeout(r, 300));
      const reply = next();
      tell({ type: "stop" });
      const w = await reply;
      row.p99 = w.type === "window" ? w.p99 : NaN;
      rows.push(row);
      log(`  ${row.attack}: ${row.succeeded} of ${row.attempts} succeeded; spectator p99 ${row.p99} ms`);
    };

    // Finding 1: prompts whose tokenizing stalled the event loop.
    log("finding 1: /v1 prompts ...");
    await post(`${base}/v1/chat/completions`, JSON.stringify({ model: "tiny", max_tokens: 1, messages: [{ role: "user", content: "hi" }] }));
    // Made before the attack: writing 6 MB of JSON is the attacker's work, not the server's.
    const bigPrompt = Buffer.from(JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "Ella entered the garage. ".repeat(250_000) }] }));
    await attack(async () => {
      const replies = (await Promise.all(Array.from({ length: 8 }, (_, i) => post(`${base}/v1/chat/completions`, bigPrompt, `127.0.0.${2 + (i % 4)}`)))).map((r) => r.status);
      // 413 (or the connection closed mid-upload): refused before the body was read.
      return { attack: "1. /v1: 6 MB prompts (8, four addresses)", attempts: replies.length, succeeded: replies.filter((s) => s !== 413 && s !== 0).length, meaning: "read (and tokenized) instead of refused unread" };
    });
    await attack(async () => {
      // Within the body limit, past what the context holds: refused before tokenizing.
      const prompt = JSON.stringify({ model: "tiny", messages: [{ role: "user", content: "x".repeat(60_000) }] });
      const replies = await Promise.all(Array.from({ length: 16 }, () => post(`${base}/v1/chat/completions`, prompt, "127.0.0.6")));
      const tokenized = replies.filter((r) => !(r.status === 400 && /bytes of text/.test(JSON.stringify(r.json))) && r.status !== 413 && r.status !== 429);
      return { attack: "1. /v1: prompts longer than the context (16)", attempts: replies.length, succeeded: tokenized.length, meaning: "tokenized instead of refused by size" };
    });

    // Finding 2: reservation floods, and one client taking every seat.
    log("finding 2: seat reservations ...");
    const priv = await createRoom("simulation", { world: "tomi", humanSeats: "all", loop: true, tickMs: 500, private: true, title: "private" });
    const pub = await createRoom("simulation", { world: "tomi", humanSeats: "all", loop: true, tickMs: 500, title: "public" });
    const flood = async (roomId: string, from: string) => {
      let next = 0;
      let granted = 0;
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          while (next < args.flood) {
            next++;
            if ((await post(`${base}/matchmake/joinById/${roomId}`, "{}", from)).status === 200) granted++;
          }
        }),
      );
      return granted;
    };
    await attack(async () => ({ attack: `2. reservation flood, private room (${args.flood})`, attempts: args.flood, succeeded: await flood(priv.roomId, "127.0.0.7"), meaning: "reserved without a token" }));
    await attack(async () => {
      const flooding = flood(pub.roomId, "127.0.0.8");
      await new Promise((r) => setTimeout(r, 200));
      // Participants from elsewhere, mid-flood: the private seat with its token, a public seat.
      const token = priv.seatTokens!.find((t) => t.index === 0)!.token;
      const joins = await Promise.all([post(`${base}/matchmake/joinById/${priv.roomId}`, JSON.stringify({ token }), "127.0.0.9"), post(`${base}/matchmake/joinById/${pub.roomId}`, JSON.stringify({ seat: "0" }), "127.0.0.10")]);
      const granted = await flooding;
      return {
        attack: `2. reservation flood, public room (${args.flood}) + 2 participants`,
        attempts: args.flood + 2,
        succeeded: Math.max(0, granted - LIMITS.pendingPerAddress) + joins.filter((j) => j.status !== 200).length,
        meaning: "reservations past the address's cap, participants locked out",
      };
    });
    await attack(async () => {
      const rooms = [];
      for (let i = 0; i < 4; i++) rooms.push(await createRoom("simulation", { world: "tomi", humanSeats: "all", tickMs: 500 }));
      let offered = 0;
      let taken = 0;
      for (const r of rooms) {
        for (let seat = 0; seat < r.seats.length; seat++) {
          offered++;
          if ((await post(`${base}/matchmake/joinById/${r.roomId}`, JSON.stringify({ seat: String(seat) }), "127.0.0.11")).status === 200) taken++;
        }
      }
      return { attack: "2. one address takes every seat", attempts: offered, succeeded: Math.max(0, taken - LIMITS.seatsPerAddress), meaning: "seats past the address's cap" };
    });

    // Finding 3: a private run's progress, read anonymously.
    log("finding 3: the progress stream ...");
    await attack(async () => {
      const listen = async (token?: string) => {
        const socket = io(`${base}/progress`, { transports: ["websocket"], ...(token ? { auth: { token } } : {}) });
        const events: string[] = [];
        socket.onAny((_type: string, e: unknown) => events.push(JSON.stringify(e)));
        await new Promise<void>((done) => socket.on("connect", () => done()));
        return { socket, events };
      };
      const watchers = [await listen(), await listen("a-guessed-token-0123456789")];
      const adminListener = await listen(ADMIN);
      const run = await createRoom("benchmark", { benchmark: "tomi", generate: { n: 12 }, agent: "random:1", tickMs: 20, private: true, title: "private run" });
      watchers[1]!.socket.emit("subscribe", { runs: [run.runId] });
      await until(() => adminListener.events.some((e) => e.includes(run.runId) && e.includes('"status"')), 20_000);
      const leaked = watchers.reduce((n, w) => n + w.events.filter((e) => e.includes(run.runId) || e.includes(run.roomId)).length, 0);
      const published = adminListener.events.filter((e) => e.includes(run.runId)).length;
      for (const w of [...watchers, adminListener]) w.socket.close();
      return { attack: "3. private run's progress, read anonymously", attempts: published * watchers.length, succeeded: leaked, meaning: "events of the private run received" };
    });

    // Finding 5: a seat flooding messages, rejoining with its token whenever it is cut off.
    log(`finding 5: ${args.seconds} s of act messages ...`);
    await attack(async () => {
      const room = await createRoom("simulation", { world: "tomi", humanSeats: "all", loop: true, tickMs: 300, turnDeadlineMs: 60_000 });
      let sent = 0;
      let processed = 0;
      let token = "";
      const join = async () => {
        try {
          const r = await new Client(base).joinById(room.roomId, token ? { token } : { seat: "0", name: "flood" });
          r.onMessage("seat", (m: { token: string }) => (token = m.token));
          r.onMessage("action_result", () => processed++);
          r.onMessage("*", () => undefined);
          return r;
        } catch {
          return undefined;
        }
      };
      let seat = await join();
      const end = Date.now() + args.seconds * 1000;
      while (Date.now() < end) {
        if (seat?.connection.isOpen) {
          for (let i = 0; i < 50; i++, sent++) seat.send("act", { action: { type: "none" } });
          await new Promise((r) => setImmediate(r));
        } else {
          seat = await join();
          if (!seat) await new Promise((r) => setTimeout(r, 20));
        }
      }
      await seat?.leave().catch(() => undefined);
      const allowed = LIMITS.seatMessageBurst + LIMITS.seatMessagesPerSecond * args.seconds;
      log(`  ${processed} of ${sent} acts were processed (a seat may send ${allowed} in ${args.seconds} s)`);
      return { attack: `5. act flood with token rejoins (${args.seconds} s)`, attempts: sent, succeeded: Math.max(0, processed - allowed), meaning: `acts processed past the seat's ${allowed}` };
    });
  } finally {
    spectator?.postMessage({ type: "close" } satisfies SpectatorRequest);
    await new Promise((r) => setTimeout(r, 200));
    await spectator?.terminate();
    await stopServe(server);
  }

  const fmt = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "-" : String(Math.round(n)));
  process.stdout.write(
    `| attack | attempts | succeeded | spectator p99 (ms) |\n|---|---:|---:|---:|\n${rows.map((r) => `| ${r.attack} | ${r.attempts} | ${r.succeeded} | ${fmt(r.p99)} |`).join("\n")}\n`,
  );
  process.stdout.write(`\nsucceeded: ${rows.map((r) => `${r.attack.split(" ")[0]} ${r.meaning}`).join("; ")}. Spectator: a room playing a timestep every ${TICK_MS} ms.\n`);
  if (args.json) writeFileSync(args.json, JSON.stringify({ rows, machine: { node: process.version } }, null, 2) + "\n");
  if (rows.some((r) => r.succeeded > 0)) process.exitCode = 1;
}

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting for the server");
    await new Promise((r) => setTimeout(r, 20));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`attack-server: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
