import type { EpisodeAudit, HeldOutPoint, Leak, QuizAccuracyPoint, RoomSummary, TrainingMetrics, TrainingRun } from "../../server/protocol.js";

/** The REST API (docs/server.md, "REST API"). */
export interface RunRecord {
  id: string;
  kind: string;
  title: string;
  createdAt: string;
  finishedAt?: string;
  status: string;
  params: Record<string, unknown>;
  summary?: Record<string, unknown>;
}

export interface Stat {
  total: number;
  correct: number;
  accuracy: number;
}

export interface Report {
  benchmark: string;
  title: string;
  agent: string;
  mode: string;
  total: number;
  correct: number;
  accuracy: number;
  byType: Record<string, Stat>;
  disagreements: { total: number };
  errors: { count: number };
}

export interface SocializedContext {
  agents_names: string[];
  socialized_context: { timestep: string; state: string; observations: string[]; actions: string[] }[];
}

export type { EpisodeAudit, HeldOutPoint, Leak, QuizAccuracyPoint, RoomSummary, TrainingMetrics, TrainingRun };

async function get<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { accept: "application/json" } });
  const body = (await res.json().catch(() => ({}))) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${res.status} ${res.statusText}`);
  return body;
}

export const api = {
  rooms: () => get<{ rooms: RoomSummary[] }>("api/rooms").then((r) => r.rooms),
  room: (id: string) => get<RoomSummary>(`api/rooms/${encodeURIComponent(id)}`),
  runs: (offset = 0, limit = 20) => get<{ total: number; runs: RunRecord[] }>(`api/runs?offset=${offset}&limit=${limit}`),
  run: (id: string) => get<{ run: RunRecord; report: Report | null }>(`api/runs/${encodeURIComponent(id)}`),
  episodes: (id: string, offset: number, limit: number) =>
    get<{ total: number; episodes: Record<string, unknown>[]; indexes: number[]; torn: boolean }>(`api/runs/${encodeURIComponent(id)}/episodes?offset=${offset}&limit=${limit}`),
  episode: (id: string, index: number) => get<SocializedContext>(`api/runs/${encodeURIComponent(id)}/episodes/${index}`),
  audit: (id: string, index: number) => get<EpisodeAudit>(`api/runs/${encodeURIComponent(id)}/episodes/${index}/audit`),
  training: () => get<{ runs: TrainingRun[] }>("api/training").then((r) => r.runs),
};
