/**
 * Imports a socialized context (ours, or one written by the social-world-model project: a bare
 * context or a result file with it under `socialized_context`, lines or dicts) as a run of the
 * store with one episode, which `runs episodes`, the REST API and the web client's run view replay.
 */
import { resolve, basename } from "node:path";
import { EpisodeLog } from "../../store/episode-log.js";
import type { RunRecord, RunStore } from "../../store/run-store.js";
import { readSapFile, type SapFile } from "../../worlds/core/sap-file.js";

export interface ImportResult {
  readonly run: RunRecord;
  readonly sap: SapFile;
}

export async function importSap(store: RunStore, file: string, title?: string): Promise<ImportResult> {
  // Read and check everything before the store is touched: bad input registers nothing.
  const sap = readSapFile(file);
  const source = resolve(file);
  const steps = sap.context.socialized_context.length;
  const run = await store.create("import", title ?? `Imported socialized context: ${basename(file)}`, {
    format: "sap",
    source,
    layout: sap.layout,
    path: sap.path || null,
  });
  const log = new EpisodeLog(store.episodesPath(run));
  try {
    log.append({
      kind: "imported_context",
      run: run.id,
      source,
      layout: sap.layout,
      ...sap.meta,
      ...(sap.problems.length ? { problems: sap.problems } : {}),
      socialized_context: sap.context,
    });
  } catch (err) {
    log.close();
    await store.update(run.id, { status: "failed", finishedAt: new Date().toISOString(), error: String(err) });
    throw err;
  }
  log.close();
  const done = await store.update(run.id, {
    status: "done",
    finishedAt: new Date().toISOString(),
    summary: { episodes: 1, agents: sap.context.agents_names.length, timesteps: steps, problems: sap.problems.length },
  });
  return { run: done, sap };
}
