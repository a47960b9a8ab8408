/** The socket.io `/progress` stream: live benchmark progress and trainer metrics. */
import { io, type Socket } from "socket.io-client";
import type { HeldOutPoint, QuizAccuracyPoint, TrainingMetrics } from "./api.js";

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
  /** kind "trainer", a failed run: why (not shown to everyone when it trains a private room). */
  error?: string;
  /** kind "trainer", self-play: the pool's quiz accuracy on new episodes, round by round. */
  quizAccuracy?: QuizAccuracyPoint[];
  /** kind "trainer", self-play with held-out episodes: the pool's accuracy on its fixed held-out questions, round by round. */
  heldOutAccuracy?: HeldOutPoint[];
}

/** "quiz_accuracy", "held_out_accuracy": a self-play pool's quiz accuracy, or its held-out accuracy, grew (no step, no end). */
export type ProgressType = "progress" | "finished" | "quiz_accuracy" | "held_out_accuracy";

let socket: Socket | undefined;
const listeners = new Set<(type: ProgressType, e: ProgressEvent) => void>();

export function onProgress(fn: (type: ProgressType, e: ProgressEvent) => void): () => void {
  if (!socket) {
    socket = io("/progress", { transports: ["websocket"] });
    socket.on("snapshot", (events: ProgressEvent[]) => events.forEach((e) => listeners.forEach((l) => l("progress", e))));
    socket.on("progress", (e: ProgressEvent) => listeners.forEach((l) => l("progress", e)));
    socket.on("finished", (e: ProgressEvent) => listeners.forEach((l) => l("finished", e)));
    socket.on("quiz_accuracy", (e: ProgressEvent) => listeners.forEach((l) => l("quiz_accuracy", e)));
    socket.on("held_out_accuracy", (e: ProgressEvent) => listeners.forEach((l) => l("held_out_accuracy", e)));
  }
  listeners.add(fn);
  return () => listeners.delete(fn);
}
