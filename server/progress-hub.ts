/**
 * The socket.io namespace `/progress`: live progress of runs (benchmark progress and scores,
 * trainer metrics). Every event names its run; a client that only cares about some runs emits
 * `subscribe` with their ids and gets only those from then on. On connecting, a client gets
 * `snapshot`: the latest event of every run still in progress that it may see.
 *
 * A private room's run is as private here as in the REST API: its events (room and run ids,
 * title, agent names, scores, per-question outcomes) go only to clients that present the admin
 * token or one of that room's tokens (its spectator token or a seat token), either when they
 * connect (`io("/progress", { auth: { token } })`) or with `subscribe` (`{ runs: [id], token }`).
 * Private events travel on channels of their own, which a client joins only once its token is
 * checked: subscribing to a run's id before the run exists gets nothing of it.
 *
 * In a group of processes (`serve --redis`), socket.io's Redis adapter carries every event to the
 * clients of every process. A private run is known (with its tokens) only to the process that
 * plays it, so that process is asked, through the adapter, whether a token a client presents to
 * another process opens it, and it puts that client in the run's channel itself; a new client's
 * snapshot gathers the latest events of every process.
 */
import type { Namespace, Server as IoServer, Socket } from "socket.io";
import { z } from "zod";
import { sameSecret } from "./secret.js";

export const PROGRESS_NAMESPACE = "/progress";

export interface ProgressEvent {
  readonly runId: string;
  /** "benchmark" or "trainer". */
  readonly kind: string;
  readonly roomId?: string;
  readonly title?: string;
  /** Anything the kind defines: done, total, correct, accuracy, byType for benchmarks. */
  readonly [field: string]: unknown;
}

const Ids = z.union([z.string().min(1).max(200), z.array(z.string().min(1).max(200)).max(1000)]);
const SubscribeSchema = z.union([Ids, z.object({ runs: Ids, token: z.string().min(1).max(200).optional() })]);
const TokenSchema = z.string().min(1).max(200);

/** Questions between the processes of a group (server-side events of the adapter). */
const OPENS = "socialworld:opens";
const LATEST = "socialworld:latest";

/** Runs a client may subscribe to at once. */
const MAX_SUBSCRIPTIONS = 1000;

/** Whether a token opens a private run (the room's spectator or seat tokens). */
export type RunAccess = (token: string) => boolean;

const publicChannel = (runId: string) => `run:${runId}`;
const privateChannel = (runId: string) => `private:${runId}`;

export class ProgressHub {
  private ns: Namespace | undefined;
  private readonly latest = new Map<string, ProgressEvent>();
  private readonly restricted = new Map<string, RunAccess>();

  constructor(private readonly adminToken = "") {}

  private group = false;
  /** Questions this process answers for the others of its group (`answer`), and news it hears from them (`hear`). */
  private readonly answers = new Map<string, () => unknown>();
  private readonly hearers = new Map<string, (...args: unknown[]) => void>();

  attach(io: IoServer, opts: { group?: boolean } = {}): void {
    const ns = (this.ns = io.of(PROGRESS_NAMESPACE));
    this.group = opts.group ?? false;
    if (this.group) {
      // Asked by another process of the group about a client of its own.
      ns.on(OPENS, (socketId: unknown, token: unknown, runIds: unknown) => {
        const key = TokenSchema.safeParse(token);
        if (typeof socketId !== "string" || !key.success) return;
        const ids = Array.isArray(runIds) ? runIds.filter((id): id is string => typeof id === "string") : [...this.restricted.keys()];
        for (const id of ids) if (this.restricted.has(id) && this.mayRead(id, key.data, false)) ns.in(socketId).socketsJoin(privateChannel(id));
      });
      for (const [question, fn] of this.answers) {
        ns.on(question, (reply: unknown) => {
          if (typeof reply === "function") reply(fn());
        });
      }
      for (const [news, fn] of this.hearers) ns.on(news, (...args: unknown[]) => fn(...args));
      ns.on(LATEST, (token: unknown, admin: unknown, reply: unknown) => {
        if (typeof reply !== "function") return;
        const key = TokenSchema.safeParse(token);
        reply([...this.latest.values()].filter((e) => this.mayRead(e.runId, key.success ? key.data : undefined, admin === true)));
      });
    }
    ns.on("connection", (socket: Socket) => {
      const given = TokenSchema.safeParse((socket.handshake.auth as { token?: unknown } | undefined)?.token);
      const token = given.success ? given.data : undefined;
      const admin = token !== undefined && sameSecret(token, this.adminToken);
      socket.join("all");
      if (admin) socket.join("all-private");
      else if (token !== undefined) {
        for (const [runId, access] of this.restricted) if (access(token)) socket.join(privateChannel(runId));
        if (this.group) ns.serverSideEmit(OPENS, socket.id, token, null);
      }
      const mine = [...this.latest.values()].filter((e) => this.mayRead(e.runId, token, admin));
      if (!this.group) socket.emit("snapshot", mine);
      else {
        // (The adapter waits for the other processes' answers at most its requestsTimeout: process-group.ts.)
        void ns
          .serverSideEmitWithAck(LATEST, token ?? null, admin)
          .catch(() => [] as ProgressEvent[][])
          .then((others: ProgressEvent[][]) => socket.emit("snapshot", [...mine, ...others.flat()]));
      }
      socket.on("subscribe", (raw: unknown) => {
        const parsed = SubscribeSchema.safeParse(raw);
        if (!parsed.success) {
          socket.emit("error_message", { error: "subscribe takes a run id, a list of run ids, or {runs, token}" });
          return;
        }
        const spec = typeof parsed.data === "string" || Array.isArray(parsed.data) ? { runs: parsed.data, token: undefined } : parsed.data;
        const ids = typeof spec.runs === "string" ? [spec.runs] : spec.runs;
        const key = spec.token ?? token;
        const isAdmin = admin || (key !== undefined && sameSecret(key, this.adminToken));
        if (socket.rooms.size + ids.length > MAX_SUBSCRIPTIONS + 3) {
          socket.emit("error_message", { error: `at most ${MAX_SUBSCRIPTIONS} runs per connection` });
          return;
        }
        socket.leave("all");
        socket.leave("all-private");
        for (const id of ids) {
          socket.join(publicChannel(id));
          if (this.restricted.has(id) && this.mayRead(id, key, isAdmin)) socket.join(privateChannel(id));
        }
        if (this.group && key !== undefined && !isAdmin) ns.serverSideEmit(OPENS, socket.id, key, ids);
      });
    });
  }

  /** Answers `question` when another process of the group asks it (`askOthers`); set before `attach`. */
  answer(question: string, fn: () => unknown): void {
    this.answers.set(`socialworld:${question}`, fn);
  }

  /** Calls `fn` with what another process of the group `tell`s; set before `attach`. */
  hear(news: string, fn: (...args: unknown[]) => void): void {
    this.hearers.set(`socialworld:${news}`, fn);
  }

  /** Tells the other processes of the group (nobody, for a process alone). */
  tell(news: string, ...args: unknown[]): void {
    if (this.group) this.ns?.serverSideEmit(`socialworld:${news}`, ...args);
  }

  /** The answers of the other processes of the group (none for a process alone, or past the adapter's timeout). */
  async askOthers<T>(question: string): Promise<T[]> {
    if (!this.group || !this.ns) return [];
    try {
      return (await this.ns.serverSideEmitWithAck(`socialworld:${question}`)) as T[];
    } catch {
      return [];
    }
  }

  /** From now on `runId`'s events go only to clients with the admin token or a token `access` accepts. */
  restrict(runId: string, access: RunAccess): void {
    this.restricted.set(runId, access);
    // Clients already connected with a token that opens it (and following every run) get it too:
    // in a group, the clients of every process.
    const opens = (socket: { handshake: Socket["handshake"]; rooms: Set<string> }) => {
      const token = TokenSchema.safeParse((socket.handshake.auth as { token?: unknown } | undefined)?.token);
      return token.success && socket.rooms.has("all") && access(token.data);
    };
    if (!this.group) {
      for (const socket of this.ns?.sockets.values() ?? []) if (opens(socket)) socket.join(privateChannel(runId));
      return;
    }
    void this.ns
      ?.in("all")
      .fetchSockets()
      .then((sockets) => {
        for (const socket of sockets) if (opens(socket)) socket.join(privateChannel(runId));
      })
      .catch(() => undefined);
  }

  /** Forgets a private run's access (after its last event). */
  release(runId: string): void {
    this.restricted.delete(runId);
    this.latest.delete(runId);
  }

  /**
   * A run made progress (`progress`), finished (`finished`: the event carries its summary), or, for
   * self-play, its pool's quiz accuracy grew (`quiz_accuracy`) or a round's policy was scored on its
   * held-out questions (`held_out_accuracy`): those two are not a run's progress, not kept for the snapshot.
   */
  publish(type: "progress" | "finished" | "quiz_accuracy" | "held_out_accuracy", event: ProgressEvent): void {
    if (type === "finished") this.latest.delete(event.runId);
    else if (type === "progress") this.latest.set(event.runId, event);
    if (!this.ns) return;
    if (this.restricted.has(event.runId)) this.ns.to("all-private").to(privateChannel(event.runId)).emit(type, event);
    else this.ns.to("all").to(publicChannel(event.runId)).emit(type, event);
  }

  /** The latest event of every run in progress (public runs only, unless `admin`). */
  active(admin = false): ProgressEvent[] {
    return [...this.latest.values()].filter((e) => admin || !this.restricted.has(e.runId));
  }

  private mayRead(runId: string, token: string | undefined, admin: boolean): boolean {
    const access = this.restricted.get(runId);
    if (!access || admin) return true;
    return token !== undefined && access(token);
  }
}
