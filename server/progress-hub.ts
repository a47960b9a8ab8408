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

  attach(io: IoServer): void {
    this.ns = io.of(PROGRESS_NAMESPACE);
    this.ns.on("connection", (socket: Socket) => {
      const given = TokenSchema.safeParse((socket.handshake.auth as { token?: unknown } | undefined)?.token);
      const token = given.success ? given.data : undefined;
      const admin = token !== undefined && sameSecret(token, this.adminToken);
      socket.join("all");
      if (admin) socket.join("all-private");
      else if (token !== undefined) for (const [runId, access] of this.restricted) if (access(token)) socket.join(privateChannel(runId));
      socket.emit("snapshot", [...this.latest.values()].filter((e) => this.mayRead(e.runId, token, admin)));
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
      });
    });
  }

  /** From now on `runId`'s events go only to clients with the admin token or a token `access` accepts. */
  restrict(runId: string, access: RunAccess): void {
    this.restricted.set(runId, access);
    // Clients already connected with a token that opens it (and following every run) get it too.
    for (const socket of this.ns?.sockets.values() ?? []) {
      const token = TokenSchema.safeParse((socket.handshake.auth as { token?: unknown } | undefined)?.token);
      if (token.success && socket.rooms.has("all") && access(token.data)) socket.join(privateChannel(runId));
    }
  }

  /** Forgets a private run's access (after its last event). */
  release(runId: string): void {
    this.restricted.delete(runId);
    this.latest.delete(runId);
  }

  /**
   * A run made progress (`progress`), finished (`finished`: the event carries its summary), or, for
   * self-play, its pool's quiz accuracy grew (`quiz_accuracy`: not a run's progress, not kept for the snapshot).
   */
  publish(type: "progress" | "finished" | "quiz_accuracy", event: ProgressEvent): void {
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
