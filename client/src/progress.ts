/** The socket.io `/progress` stream: live benchmark progress and trainer metrics. */
import { io, type Socket } from "socket.io-client";
import type { TrainingMetrics } from "./api.js";

export interface ProgressEvent {
  runId: string;
  kind: string;
  roomId?: string;
  title?: string;
  done?: number;
  total?: number;
  correct?: number;
  accuracy?: number;
  status?: string;
  /** kind "trainer": the step's metrics, the run's step count and source, its rooms and round, its checkpoint when done. */
  metrics?: TrainingMetrics;
  steps?: number;
  source?: string;
  roomIds?: string[];
  round?: number;
  checkpoint?: string;
}

let socket: Socket | undefined;
const listeners = new Set<(type: "progress" | "finished", e: ProgressEvent) => void>();

export function onProgress(fn: (type: "progress" | "finished", e: ProgressEvent) => void): () => void {
  if (!socket) {
    socket = io("/progress", { transports: ["websocket"] });
    socket.on("snapshot", (events: ProgressEvent[]) => events.forEach((e) => listeners.forEach((l) => l("progress", e))));
    socket.on("progress", (e: ProgressEvent) => listeners.forEach((l) => l("progress", e)));
    socket.on("finished", (e: ProgressEvent) => listeners.forEach((l) => l("finished", e)));
  }
  listeners.add(fn);
  return () => listeners.delete(fn);
}
