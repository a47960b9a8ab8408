/**
 * One process, one port: the Colyseus rooms (WebSocket transport), the REST API and the built web
 * client (express), and the socket.io progress stream, on the embedded store. With `redis`, the
 * process is one of a group sharing that Redis and the store (group/process-group.ts, docs/scale.md).
 *
 * Order matters on the shared HTTP server: Colyseus binds its matchmaking routes (falling back to
 * express) when it listens, and socket.io is attached after that, so that engine.io wraps the
 * request handler and takes only /socket.io/ requests; the Colyseus transport ignores upgrades to
 * /socket.io/.
 */
import { existsSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { matchMaker, Server } from "@colyseus/core";
import express from "express";
import { Server as IoServer } from "socket.io";
import { RunStore } from "../store/run-store.js";
import { apiRouter } from "./api/router.js";
import { discoverPolicies } from "./openai/models.js";
import { restoreTrainingRuns } from "./training-history.js";
import { OpenAiService } from "./openai/service.js";
import { ServerConfigSchema, type ServerConfig } from "./config.js";
import { hasServerContext, seatsHeldBy, setServerContext, type ServerContext } from "./context.js";
import { startDemoRooms } from "./demo.js";
import { freePort } from "./group/free-port.js";
import { defaultPublicAddress, forgetProcess, joinGroup, relistRooms, type ProcessGroup } from "./group/process-group.js";
import { HEARTBEAT_TTL_MS, ProcessHeartbeat } from "./group/process-heartbeat.js";
import { SharedLimits } from "./group/shared-limits.js";
import { poolPeers } from "./group/pool-peers.js";
import { PersistedRooms, type DeadProcesses } from "./room-registry.js";
import { ownerGone } from "../store/owner.js";
import { fenceWrites } from "../store/write-fence.js";
import type { RoomEntry } from "../store/room-registry.js";
import { ProgressHub } from "./progress-hub.js";
import { SelfPlayPools } from "./self-play/pools.js";
import { TrainingBoard } from "./training-board.js";
import { BenchmarkRoom } from "./rooms/benchmark-room.js";
import { SimulationRoom } from "./rooms/simulation-room.js";
import { SocialRoom } from "./rooms/social-room.js";
import { provideWebSocketGlobal } from "./websocket-global.js";
import { QuietWebSocketTransport } from "./quiet-websocket-transport.js";
import { ClientGuard } from "./security/client-guard.js";
import { installHttpGate, silenceColyseusCors } from "./security/http-gate.js";
import { matchmakeGate } from "./security/matchmake-gate.js";
import { v1Exposure, type V1Exposure } from "./security/v1-exposure.js";

/**
 * How long a stopping process of a group waits for a Redis that does not answer before it stops
 * without it (its rooms then come back in the other processes, as a killed process's do). Long
 * enough for a Redis restarting; short enough that, Redis lost as the shutdown begins, the write
 * lease (8 s from the last heartbeat answered, sent at most 2 s earlier) still holds when the rooms,
 * no longer waiting on Redis, log the end of their episodes.
 */
const REDIS_STOP_WAIT_MS = 5000;

/** How often a process of a group looks for rooms of a process that died. */
const ORPHAN_CHECK_MS = 1000;

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  readonly adminToken: string;
  /** True when the admin token was generated for this run (nobody else knows it). */
  readonly generatedToken: boolean;
  readonly context: ServerContext;
  readonly demoRoomIds: readonly string[];
  /** Rooms of an earlier server on this store, recreated at start. */
  readonly restoredRoomIds: readonly string[];
  /** Who may use /v1: this machine only, holders of the API key, or anyone (`openV1`). */
  readonly v1: V1Exposure;
  /** In a group (`redis`): where clients reach this process's rooms. */
  readonly publicAddress?: string;
  /** Stops every room (their episodes and runs are logged as interrupted), then the server. */
  close(): Promise<void>;
  /**
   * In a group: why the shutdown went on without Redis (it did not answer for REDIS_STOP_WAIT_MS),
   * if it did. The process must then exit: its connections to Redis are left open (ProcessGroup.close).
   */
  readonly stoppedWithoutRedis: string | undefined;
}

/**
 * This process was declared dead by the group (no heartbeat for HEARTBEAT_TTL_MS: paused, or cut
 * off from Redis) and its rooms are being recreated by another: anything it wrote now (a room's
 * log, the registry) would be written twice, so it stops at once, writing nothing (until then its
 * fence held every write: group/fence.ts). Its heartbeat finds out (its tombstone in Redis, or its
 * rooms registered to another in the store), or sooner a write to Redis that its fence refused.
 * A launcher (`serve --processes`, systemd) starts it again, fresh.
 */
function fenced(by: string): void {
  console.error(`[group] this process missed its heartbeat for ${HEARTBEAT_TTL_MS / 1000} s and was declared dead; its rooms are recreated by ${by}. Stopping now, without writing anything.`);
  process.exit(1);
}

export async function startServer(input: ServerConfig): Promise<RunningServer> {
  const config = ServerConfigSchema.parse(input);
  // Refused before anything starts: /v1 without a key off loopback, unless asked for by name.
  const v1 = v1Exposure(config.host, config.openaiApiKey, config.openV1);
  provideWebSocketGlobal();
  const generatedToken = config.adminToken === undefined;
  const adminToken = config.adminToken ?? randomBytes(18).toString("base64url");
  // A group's Redis is checked first: unreachable, nothing starts (the error says how to start one).
  const group: ProcessGroup | undefined = config.redis ? await joinGroup(config.redis) : undefined;
  group?.fence.onTrip(fenced);
  // In a group, clients are sent to this process's own address, which must be known before Colyseus starts.
  const listenPort = group && config.port === 0 ? await freePort(config.host) : config.port;
  const publicAddress = group ? (config.publicAddress ?? defaultPublicAddress(config.host, listenPort)) : undefined;
  const store = await RunStore.open(config.store);
  const hub = new ProgressHub(adminToken);
  const training = new TrainingBoard(hub);
  const guard = new ClientGuard(config.clientLimits ?? {});
  const persisted = new PersistedRooms(store.root);
  const context: ServerContext = { store, hub, dataRoots: config.dataRoots, rooms: new Map(), training, selfPlay: new SelfPlayPools(store, training, group ? (pool) => poolPeers(group, pool) : undefined), guard, persisted, ...(group ? { group } : {}) };
  // The dashboard shows the store's earlier training runs too (server/training-history.ts).
  restoreTrainingRuns(store, training);
  // Policies under <store>/policies/ and those configured ($SOCIALWORLD_POLICIES), as an OpenAI-compatible API at /v1.
  const openai = new OpenAiService({
    models: () => discoverPolicies(config.store, config.policies),
    ...(config.openaiApiKey ? { apiKey: config.openaiApiKey } : {}),
    ...(config.v1PerClient !== undefined ? { maxPerClient: config.v1PerClient } : {}),
  });
  const startedAt = new Date();

  // Rooms are created by the server (demo rooms) and the admin API, never by a matchmaking request.
  matchMaker.controller.exposedMethods = ["joinById", "reconnect"];

  const http: HttpServer = createServer();
  // 64 KiB: a person's action or answer, with room to spare; nothing a client sends is bigger.
  const transport = new QuietWebSocketTransport({ noServer: true, maxPayload: 64 * 1024 });
  transport.attachToServer(http, { filter: (req) => !(req.url ?? "").startsWith("/socket.io/") });

  const gameServer = new Server({
    transport,
    greet: false,
    gracefullyShutdown: false,
    ...(group ? { presence: group.presence, driver: group.driver, publicAddress } : {}),
    express: (app) => {
      app.disable("x-powered-by");
      app.use("/api", apiRouter(context, adminToken, startedAt));
      app.use("/v1", openai.router);
      if (existsSync(config.clientDir)) {
        app.use(express.static(config.clientDir, { index: "index.html", fallthrough: true }));
      } else {
        app.get("/", (_req, res) => {
          res.type("text/plain").send(`socialworld: the web client is not built (${config.clientDir} is missing); run \`npm run build:client\`.\n`);
        });
      }
    },
  });
  gameServer.define("simulation", SimulationRoom);
  gameServer.define("benchmark", BenchmarkRoom);
  gameServer.define("social", SocialRoom);
  // Colyseus listens for the HTTP server's errors only once it is listening: without this, a port
  // in use is an unhandled 'error' event (a crash) instead of a failed start.
  let onListenError: ((err: Error) => void) | undefined;
  const listenFailed = new Promise<never>((_, fail) => http.once("error", (onListenError = fail)));
  try {
    await Promise.race([gameServer.listen(listenPort, config.host), listenFailed]);
  } catch (err) {
    // Stop what listen() started, so that a failed start does not keep the process alive: the
    // matchmaker's timers (unless another server of this process uses the matchmaker), and the
    // transport's ping timer, which stops when the HTTP server closes (one that never listened
    // does not close by itself). The server context is set only below, so another server goes on.
    if (!hasServerContext()) await gameServer.gracefullyShutdown(false);
    http.emit("close");
    await group?.close();
    throw err;
  } finally {
    http.off("error", onListenError!);
  }
  // Rooms find the store and the progress hub here once they are created (they cannot be before).
  setServerContext(context);
  // In a group, this process is named alive in Redis before it registers any room (process-heartbeat.ts).
  let heartbeat: ProcessHeartbeat | undefined;
  let sharedLimits: SharedLimits | undefined;
  try {
    heartbeat = group ? await ProcessHeartbeat.start(group.redis, matchMaker.processId, group.fence, { takenOver: () => persisted.takenBy() }) : undefined;
    // From its first heartbeat on, every write of the store in this process asks the group's fence (store/write-fence.ts).
    if (group) fenceWrites(group.fence);
    // The per-address caps count over the whole group (group/shared-limits.ts).
    if (group) guard.shared = sharedLimits = new SharedLimits(group.redis, group.fence, matchMaker.processId, guard.limits, (address) => seatsHeldBy(context, address));
  } catch (err) {
    await gameServer.gracefullyShutdown(false);
    await group?.close();
    if (group) fenceWrites(undefined);
    setServerContext(undefined);
    throw err;
  }
  // In front of Colyseus's routes and express: CORS, and seat reservations (security/).
  silenceColyseusCors();
  installHttpGate(http, config.allowedOrigins, [matchmakeGate(context, guard)]);

  const io = new IoServer(http, { serveClient: false, destroyUpgrade: false, maxHttpBufferSize: 64 * 1024, ...(group ? { adapter: group.ioAdapter } : {}) });
  hub.attach(io, { group: group !== undefined });

  const port = (http.address() as AddressInfo).port;
  const shownHost = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const url = `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${port}/`;

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Rooms abort their episodes, log them and close their runs before they go away; a
      // self-play round in progress stops at its next step with a checkpoint. They stay in the
      // room registry: the next server brings them back.
      stopWatching?.();
      // With Redis away, a write that found the lease lapsed would wait for it for ever: the shutdown ends instead (group/fence.ts).
      group?.fence.stopping(HEARTBEAT_TTL_MS);
      // And so would Colyseus's shutdown, on the commands its connections queue until Redis comes back.
      group?.stopping(REDIS_STOP_WAIT_MS, (why) => console.error(`[group] ${why}: stopping without it (what this process still had to tell Redis is dropped; its rooms come back in the other processes of the group, as a killed process's do)`));
      const registryWritten = persisted.close();
      await gameServer.gracefullyShutdown(false);
      await registryWritten;
      await context.selfPlay.closeAll();
      // Last, once its rooms' logs are flushed: the processes of other machines may take them over now.
      await heartbeat?.stop();
      sharedLimits?.close();
      await openai.close();
      await new Promise<void>((done) => io.close(() => done()));
      await group?.close();
      if (group) fenceWrites(undefined);
      http.closeAllConnections();
      await new Promise<void>((done) => http.close(() => done()));
      setServerContext(undefined);
    })());

  let demoRoomIds: string[] = [];
  let stopWatching: (() => void) | undefined;
  let restoredRoomIds: string[] = [];
  try {
    // Rooms of a server that was killed or stopped come back first, under their ids, here (not
    // through matchmaking, which in a group may create a room in another process). What a dead
    // process of the group left listed goes before its rooms come back (forgetProcess).
    const beat = heartbeat;
    const dead: DeadProcesses | undefined =
      beat && group
        ? {
            takeOver: (owners) => beat.takeOver(owners),
            tookOver: async (owners) => {
              for (const processId of await beat.tookOver(owners)) await forgetProcess(group, processId);
            },
          }
        : undefined;
    const create = async (type: RoomEntry["type"], options: Record<string, unknown>, roomId: string) => {
      // The registry gave this process the room: a listing left under its id by the process that died goes
      // (else Colyseus, which lists a room only under a free id, would discard the room recreated).
      if (group) await matchMaker.driver.remove(roomId);
      return matchMaker.handleCreateRoom(type, options);
    };
    restoredRoomIds = await persisted.restore(create, ownerGone, dead && ((owners) => dead.tookOver(owners)));
    group?.onReconnect(() => void relistRooms().catch((err: unknown) => console.error(`[group] relisting rooms: ${(err as Error).message}`)));
    // A process of the group dead (killed, or silent in Redis): its rooms come back in another (from their saved options, as after a restart).
    if (dead) {
      stopWatching = persisted.watchOrphans(create, ORPHAN_CHECK_MS, (ids) => console.log(`[group] ${ids.length} room${ids.length === 1 ? "" : "s"} of a process that died recreated here: ${ids.join(", ")}`), dead);
    }
    if (config.demo) demoRoomIds = await startDemoRooms();
  } catch (err) {
    await close();
    throw err;
  }
  return {
    url,
    port,
    adminToken,
    generatedToken,
    context,
    demoRoomIds,
    restoredRoomIds,
    v1,
    ...(publicAddress ? { publicAddress } : {}),
    close,
    get stoppedWithoutRedis() {
      return group?.fence.redisGivenUp;
    },
  };
}
