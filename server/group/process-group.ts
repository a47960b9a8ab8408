/**
 * A server process's part in a group of processes joined by one Redis (`serve --redis URL`):
 * Colyseus's Redis presence and driver (room listings, seat reservations and calls to a room of
 * another process: any process answers matchmaking for any room), and socket.io's Redis adapter
 * (a `/progress` event published by one process reaches the clients of every process). Nothing
 * here moves rooms or messages by itself: those engines do.
 *
 * A room stays in the process that created it; its clients connect there, at the address its
 * seat reservation names (`publicAddress`: this process's HOST:PORT), whichever process answered
 * the reservation. Redis restarting: every connection reconnects by itself, and once it is back
 * this process lists its rooms again (a Redis without persistence comes back empty).
 *
 * A server stopping while Redis does not answer would wait for it for ever: Colyseus's shutdown
 * and socket.io's send commands that the connections queue until Redis comes back. Once Redis has
 * been silent for a while into the shutdown, this process gives it up (`stopping`): what it still
 * asks of Redis ends unanswered, the shutdown goes on without it, and the process exits; the
 * group recreates its rooms as a killed process's.
 */
import { hostname } from "node:os";
import { matchMaker } from "@colyseus/core";
import { createAdapter } from "@socket.io/redis-adapter";
import type { Redis } from "ioredis";
import { ownerKey, thisProcess } from "../../store/owner.js";
import { Fence } from "./fence.js";
import { GroupPresence } from "./group-presence.js";
import { tombstoneKey } from "./process-heartbeat.js";
import { checkReachable, redisConnection } from "./redis.js";
import { shownUrl } from "./redis-url.js";
import { GroupRoomDriver } from "./room-listings.js";

export interface ProcessGroup {
  readonly url: string;
  readonly presence: GroupPresence;
  readonly driver: GroupRoomDriver;
  /** This process's fencing token: once it is declared dead, its presence and driver write nothing (fence.ts). */
  readonly fence: Fence;
  /** socket.io's adapter for the group (io.adapter(...)). */
  readonly ioAdapter: ReturnType<typeof createAdapter>;
  /** A connection for this project's own keys (leases). */
  readonly redis: Redis;
  /** Lists this process's rooms again after Redis came back (called on every reconnection). */
  onReconnect(fn: () => void): void;
  /**
   * The server is stopping: from now on, once Redis has gone `ms` without answering a PING (away,
   * restarting, cut off, frozen), it is given up (Fence.giveUpRedis) and `gaveUp` is told why.
   */
  stopping(ms: number, gaveUp: (why: string) => void): void;
  /**
   * Closes the connections Colyseus does not close itself (it shuts its presence and driver down),
   * each once Redis has answered every command sent on it: ending one earlier would fail those
   * still waiting, and some are awaited by nobody (socket.io's unsubscribes as it closes: unhandled
   * rejections, which end the process with Node's error). Redis silent meanwhile (on any of them,
   * for the watch's wait): it is given up as the watch (`stopping`) does, and once Redis was given
   * up the connections are left as they are; the process exits instead. Without a watch (a start
   * that failed), they are ended after `ms`.
   */
  close(ms?: number): Promise<void>;
}

/** Connects to the group's Redis; an unreachable Redis is RedisUnreachable, before anything starts. */
export async function joinGroup(url: string): Promise<ProcessGroup> {
  const probe = redisConnection(url, "probe", { failFast: true });
  try {
    await checkReachable(probe, url);
  } finally {
    probe.disconnect();
  }
  const presenceConn = redisConnection(url, "presence");
  const driverConn = redisConnection(url, "driver");
  const ioPub = redisConnection(url, "progress");
  const ioSub = ioPub.duplicate({ connectionName: "socialworld:progress-sub" });
  ioSub.on("error", () => undefined);
  const own = redisConnection(url, "group");
  const reconnected = new Set<() => void>();
  // "ready" comes once at start and again after every reconnection: only the later ones matter.
  let started = false;
  own.on("ready", () => {
    if (!started) return void (started = true);
    console.error(`[group] Redis is back: listing this process's rooms again`);
    for (const fn of reconnected) fn();
  });
  own.on("end", () => undefined);
  let warned = false;
  let closing = false;
  /** While the server stops: whether Redis still answers (stopping). */
  let watching: NodeJS.Timeout | undefined;
  /** Resolves once Redis is given up (stopping). */
  let givenUp!: () => void;
  /** Once the server is stopping: the watch's wait, and how it gives Redis up (stopping). */
  let watch: { ms: number; giveUp: () => void } | undefined;
  const gaveUpRedis = new Promise<void>((done) => (givenUp = done));
  own.on("close", () => {
    if (!started || warned || closing) return;
    warned = true;
    console.error(`[group] lost Redis; reconnecting (rooms go on; matchmaking of other processes' rooms waits for it)`);
    setTimeout(() => (warned = false), 10_000).unref();
  });
  const fence = new Fence(tombstoneKey(ownerKey(thisProcess())));
  // socket.io's adapter publishes every event, and its answers to other processes, with this: fenced too.
  const publish = (channel: string | Buffer, message: string | Buffer) => fence.write(ioPub, "publish", channel, message).then((n) => Number(n ?? 0));
  ioPub.publish = publish as typeof ioPub.publish;
  return {
    url,
    presence: new GroupPresence(presenceConn, fence),
    driver: new GroupRoomDriver(driverConn, fence),
    fence,
    ioAdapter: createAdapter(ioPub, ioSub, { key: "socialworld:progress", requestsTimeout: 1500 }),
    redis: own,
    onReconnect: (fn) => void reconnected.add(fn),
    stopping(ms, gaveUp) {
      if (watching) return;
      /** When the PING waiting for its answer was sent (one at a time), if one is waiting. */
      let sentAt: number | undefined;
      const ask = () => {
        const ping = (sentAt = performance.now());
        // An error reply (BUSY, a script running) is an answer too: Redis is there, and so are the replies of the shutdown's commands.
        const answered = () => void (sentAt === ping && (sentAt = undefined));
        own.ping().then(answered, answered);
      };
      const giveUp = () => {
        clearInterval(watching);
        const why = `Redis at ${shownUrl(url)} did not answer for ${ms / 1000} s of the shutdown`;
        fence.giveUpRedis(why);
        gaveUp(why);
        givenUp();
      };
      watch = { ms, giveUp };
      ask();
      watching = setInterval(
        () => {
          if (sentAt === undefined) return ask();
          if (performance.now() - sentAt < ms) return;
          // Decided after the loop has read its sockets (setImmediate runs after the poll phase), not
          // here: a loop blocked for `ms` (the rooms' synchronous shutdown, a loaded machine) runs
          // this timer before the PONG that came meanwhile is read, and Redis was not silent.
          setImmediate(() => {
            if (sentAt !== undefined && performance.now() - sentAt >= ms && fence.redisGivenUp === undefined) giveUp();
          });
        },
        Math.min(250, ms / 4),
      );
      watching.unref();
    },
    async close(ms = 5000) {
      if (closing) return;
      closing = true;
      const connections = [ioPub, ioSub, own];
      if (fence.redisGivenUp === undefined) {
        // Redis answers in order: a PING answered on a connection means every command sent on it before
        // was. A connection ended with commands waiting fails them unless Redis closes it within 2 s
        // (ioredis' disconnectTimeout): a Redis stalled that long as the shutdown ends.
        let answered = false;
        const pinged = Promise.all(connections.map((c) => c.ping().catch(() => undefined))).then(() => void (answered = true));
        // A server stopping holds each connection to the watch's rule, PINGs unanswered for its wait give
        // Redis up: the watch PINGs one connection only, and another can be stuck while that one answers
        // (waiting on it would never end). A start that failed (no watch) waits `ms`, then ends the
        // connections as they are. Decided after the loop has read its sockets, as the watch does.
        const wait = watch?.ms ?? ms;
        let timer: NodeJS.Timeout | undefined;
        const waited = new Promise<void>((done) => (timer = setTimeout(() => setImmediate(done), wait)));
        await Promise.race([pinged, gaveUpRedis, waited]);
        clearTimeout(timer);
        if (!answered && fence.redisGivenUp === undefined) watch?.giveUp();
      }
      clearInterval(watching);
      if (fence.redisGivenUp !== undefined) return;
      for (const c of connections) c.disconnect();
    },
  };
}

/** What Redis lost when it restarted, put back: this process's room listings and its stats. */
export async function relistRooms(): Promise<void> {
  await matchMaker.restoreMissingRoomCaches();
  await matchMaker.stats.persist();
}

/**
 * What a dead process of the group left in Redis, dropped before its rooms are recreated: its
 * room listings (Colyseus's driver) and its room count (the placement of new rooms). Colyseus
 * drops them itself only when a call to that process times out; until then `GET /api/rooms` and
 * matchmaking would still find a listing of the dead process under an id that is not recreated.
 */
export async function forgetProcess(group: ProcessGroup, processId: string): Promise<void> {
  await matchMaker.stats.excludeProcess(processId);
  await group.driver.cleanup(processId);
}

/** Where clients reach this process: HOST:PORT, with the host name of the machine for a wildcard address. */
export function defaultPublicAddress(host: string, port: number): string {
  const h = host === "0.0.0.0" || host === "::" ? hostname() : host;
  return `${h.includes(":") ? `[${h}]` : h}:${port}`;
}

