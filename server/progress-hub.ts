/**
 * The socket.io namespace `/progress`: live progress of runs (benchmark progress and scores now,
 * trainer metrics later). Every event names its run; a client that only cares about some runs
 * emits `subscribe` with their ids and gets only those from then on. On connecting, a client gets
 * `snapshot`: the latest event of every run still in progress.
 */
import type { Namespace, Server as IoServer, Socket } from "socket.io";
import { z } from "zod";

export const PROGRESS_NAMESPACE = "/progress";

export interface ProgressEvent {
  readonly runId: string;
  /** "benchmark" now; "trainer" later. */
  readonly kind: string;
  readonly roomId?: string;
  readonly title?: string;
  /** Anything the kind defines: done, total, correct, accuracy, byType for benchmarks. */
  readonly [field: string]: unknown;
}

const SubscribeSchema = z.union([z.string().min(1).max(200), z.array(z.string().min(1).max(200)).max(1000)]);

export class ProgressHub {
  private ns: Namespace | undefined;
  private readonly latest = new Map<string, ProgressEvent>();

  attach(io: IoServer): void {
    this.ns = io.of(PROGRESS_NAMESPACE);
    this.ns.on("connection", (socket: Socket) => {
      socket.join("all");
      socket.emit("snapshot", [...this.latest.values()]);
      socket.on("subscribe", (ids: unknown) => {
        const parsed = SubscribeSchema.safeParse(ids);
        if (!parsed.success) {
          socket.emit("error_message", { error: "subscribe takes a run id or a list of run ids" });
          return;
        }
        socket.leave("all");
        for (const id of typeof parsed.data === "string" ? [parsed.data] : parsed.data) socket.join(`run:${id}`);
      });
    });
  }

  /** A run made progress (`progress`) or finished (`finished`: the event carries its summary). */
  publish(type: "progress" | "finished", event: ProgressEvent): void {
    if (type === "finished") this.latest.delete(event.runId);
    else this.latest.set(event.runId, event);
    this.ns?.to("all").to(`run:${event.runId}`).emit(type, event);
  }

  active(): ProgressEvent[] {
    return [...this.latest.values()];
  }
}
